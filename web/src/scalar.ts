// The API reference's renderer (Scalar): its prebuilt browser bundle, taken from the published
// package at this version and checked against this digest (web/vite.config.ts puts it under
// /assets/scalar-<version>/), never installed as a dependency. Installed, its 24 packages of build
// tooling each ask for Node 22 and npm ci warns on the Node 20 the machines run; the bundle is
// the same code whatever Node fetched it, and vite no longer spends minutes rebuilding it.
// A new version: change both fields (`npm view @scalar/api-reference@X dist.integrity`).
export const SCALAR = {
  version: '1.72.1',
  integrity: 'sha512-XpEJ0rfc/cXbCrR+iC4kK0o/WwX2dTtGQbT049OlPKAHD6IMIFdTeGz2r+M27P2EDWKyUITRm/NzlP8z2pw/Ow==',
} as const;

/** Where the bundle's entry is served. */
export const SCALAR_ENTRY = `/assets/scalar-${SCALAR.version}/standalone.esm.js`;
