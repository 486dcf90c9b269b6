// The API reference: Scalar renders /v1/openapi.json, with examples and a client that sends
// requests from this page. Loaded lazily (the renderer is the heaviest part of the site), with its
// fonts, telemetry and hosted services off: everything comes from this origin. A key signed in on
// the dashboard (this tab's session) is filled in, so requests can be tried at once; otherwise the
// key field is empty (see emptyKeyField).
import './base.css';
import { ACCESSIBLE_CSS, keyboardScrolling } from './docs-a11y.js';
import { byId } from './dom.js';
import { SCALAR_ENTRY } from './scalar.js';
import { sessionKey } from './session.js';

/** The part of the renderer's bundle this page calls (its styles come with it). */
interface ScalarBundle {
  createApiReference(element: HTMLElement, configuration: Record<string, unknown>): unknown;
}

/**
 * The renderer shows this in an empty key field (a base64 joke): it reads as a filled-in key, and a
 * request tried with the field like that is answered 401. The field shows nothing until a key is typed.
 */
const RENDERER_KEY_PLACEHOLDER = 'QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT';

/** Clears that placeholder from every key field under `root`, now and as the renderer re-renders. */
function emptyKeyField(root: HTMLElement): void {
  const clear = (): void => {
    for (const input of root.querySelectorAll<HTMLInputElement>(`input[placeholder="${RENDERER_KEY_PLACEHOLDER}"]`)) input.placeholder = '';
  };
  new MutationObserver(clear).observe(root, { childList: true, subtree: true, attributes: true, attributeFilter: ['placeholder'] });
  clear();
}

async function start(): Promise<void> {
  const state = byId('docs-state');
  try {
    const { createApiReference } = (await import(/* @vite-ignore */ SCALAR_ENTRY)) as ScalarBundle;
    const key = sessionKey();
    createApiReference(byId('reference'), {
      url: '/v1/openapi.json',
      withDefaultFonts: false,
      telemetry: false,
      agent: { disabled: true },
      hideClientButton: false,
      showDeveloperTools: 'never',
      documentDownloadType: 'json',
      defaultOpenAllTags: true, // every operation listed in the sidebar
      persistAuth: false,
      theme: 'default',
      forceDarkModeState: 'light',
      hideDarkModeToggle: true,
      customCss: ACCESSIBLE_CSS,
      authentication: {
        preferredSecurityScheme: 'apiKey',
        ...(key ? { securitySchemes: { apiKey: { value: key } } } : {}),
      },
    });
    emptyKeyField(byId('reference'));
    keyboardScrolling(byId('reference'));
    state.textContent = key ? 'Requests you try here use the key you signed in with on the dashboard.' : 'Sign in on the dashboard to try requests with your key, or enter one under Authentication.';
  } catch {
    state.textContent = 'The API reference could not be loaded; the raw document is at /v1/openapi.json.';
  }
}

void start();
