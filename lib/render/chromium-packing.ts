/**
 * How the Lambda layer carries the browser (cdk/constructs/chromium-layer.ts packs it,
 * lib/render/chromium-unpack.ts unpacks it): one name for both sides.
 */
export const PACKED_CHROMIUM_FILE = 'chromium.zst';
