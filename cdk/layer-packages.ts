/**
 * What the Chromium layer carries (cdk/constructs/chromium-layer.ts), for the functions that render:
 * their bundles, and the bundles of the workers they start (cdk/bundling.ts), keep these external.
 * Kept free of aws-cdk-lib, so cdk/bundling.ts reads it without loading the CDK.
 */
export const CHROMIUM_PACKAGE = '@sparticuz/chromium';
/**
 * qpdf compiled to WebAssembly (lib/render/encryption.ts) loads its .wasm from beside its own code,
 * so, like Chromium, it is kept out of the bundles and shipped in the layer.
 */
export const QPDF_PACKAGE = '@neslinesli93/qpdf-wasm';
export const LAYER_PACKAGES = [CHROMIUM_PACKAGE, QPDF_PACKAGE] as const;
