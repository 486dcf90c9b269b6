// Small DOM helpers: no framework, and never innerHTML with data (text goes in as text).

type Child = Node | string | number | null | undefined | false;

/** An element with attributes (`class`, `data-*`, aria-*, ...) and children (strings become text). */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | undefined> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) if (value !== undefined) node.setAttribute(name, value);
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(typeof child === 'number' ? String(child) : child);
  return node;
}

/** The element with this id; a page without it is a bug in the page, said plainly. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`#${id} is missing from the page`);
  return node as T;
}

/** A table cell labelled with its column (the label shows on phones, where rows become cards). */
export function cell(label: string, ...children: Child[]): HTMLTableCellElement {
  return el('td', { 'data-label': label }, ...children);
}

/** Copies text to the clipboard and says so in `status`. */
export async function copyText(text: string, status: HTMLElement): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    status.textContent = 'Copied to the clipboard.';
  } catch {
    status.textContent = 'Copy did not work here: select the key and copy it by hand.';
  }
}
