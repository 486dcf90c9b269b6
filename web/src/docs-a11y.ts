// Accessibility repairs of the rendered API reference (a third-party Vue app), so /docs passes the
// same automated check as every other page:
// - contrast: its light theme's secondary greys are too light on white; darker ones here;
// - scrolling panels (code samples, long lists) get into the tab order, so a keyboard can scroll
//   them (axe's scrollable-region-focusable), each a region with a name of its own;
// - its value editors (contenteditable comboboxes) get a name and aria-expanded.
export const ACCESSIBLE_CSS = `
.light-mode {
  --scalar-color-2: #4d4d4d !important;
  --scalar-color-3: #595959 !important;
  --scalar-sidebar-color-2: #4d4d4d !important;
  --scalar-color-green: #0a6b3b !important;
  --scalar-color-blue: #1a57c2 !important;
  --scalar-color-orange: #8a4b00 !important;
  --scalar-color-red: #a4262c !important;
  --scalar-color-purple: #6b2fa0 !important;
  --scalar-color-yellow: #6e5200 !important;
}
`;

const FOCUSABLE = 'a[href], button, input, select, textarea, [tabindex]';

function scrolls(node: HTMLElement): boolean {
  const style = getComputedStyle(node);
  const x = /(auto|scroll)/.test(style.overflowX) && node.scrollWidth > node.clientWidth;
  const y = /(auto|scroll)/.test(style.overflowY) && node.scrollHeight > node.clientHeight;
  return x || y;
}

/** Makes every scrolling panel under `root` without focusable content focusable, now and as it re-renders. */
export function keyboardScrolling(root: HTMLElement): void {
  let pending = false;
  let regions = 0;
  const fix = () => {
    pending = false;
    for (const node of root.querySelectorAll<HTMLElement>('*')) {
      if (node.hasAttribute('tabindex') || !scrolls(node) || node.querySelector(FOCUSABLE)) continue;
      node.tabIndex = 0;
      if (!node.getAttribute('aria-label') && !node.getAttribute('role')) {
        node.setAttribute('role', 'region');
        node.setAttribute('aria-label', `Scrollable content ${++regions}`);
      }
    }
    for (const editor of root.querySelectorAll<HTMLElement>('[contenteditable][role="combobox"]')) {
      if (!editor.hasAttribute('aria-expanded')) editor.setAttribute('aria-expanded', 'false');
      if (!editor.getAttribute('aria-label')) editor.setAttribute('aria-label', editor.dataset.placeholder ? `Value of ${editor.dataset.placeholder}` : 'Value');
    }
  };
  new MutationObserver(() => {
    if (pending) return;
    pending = true;
    setTimeout(fix, 200);
  }).observe(root, { childList: true, subtree: true });
  fix();
}
