// The methodology page: docs/methodology.md, rendered into the page at build time
// (web/vite.config.ts), so it needs no script beyond its styles.
import './style.css';
