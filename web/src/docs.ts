// The API reference: Scalar renders /v1/openapi.json, with examples and a client that sends
// requests from this page. Loaded lazily (the renderer is the heaviest part of the site), with its
// fonts, telemetry and hosted services off: everything comes from this origin. A key signed in on
// the dashboard (this tab's session) is filled in, so requests can be tried at once.
import './base.css';
import { ACCESSIBLE_CSS, keyboardScrolling } from './docs-a11y.js';
import { byId } from './dom.js';
import { sessionKey } from './session.js';

async function start(): Promise<void> {
  const state = byId('docs-state');
  try {
    const [{ createApiReference }] = await Promise.all([import('@scalar/api-reference'), import('@scalar/api-reference/style.css')]);
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
    keyboardScrolling(byId('reference'));
    state.textContent = key ? 'Requests you try here use the key you signed in with on the dashboard.' : 'Sign in on the dashboard to try requests with your key, or enter one under Authentication.';
  } catch {
    state.textContent = 'The API reference could not be loaded; the raw document is at /v1/openapi.json.';
  }
}

void start();
