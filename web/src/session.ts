// The signed-in key: in this tab's sessionStorage only (gone when the tab closes), never in a URL,
// a cookie or a log.
const NAME = 'afrates.apiKey';
export const KEY_PATTERN = /^afr_live_[0-9A-Za-z]{32}$/;

export function sessionKey(): string | null {
  try {
    return sessionStorage.getItem(NAME);
  } catch {
    return null;
  }
}

export function keepKey(key: string): void {
  sessionStorage.setItem(NAME, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(NAME);
}
