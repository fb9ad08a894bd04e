/**
 * `repeated-tool-failure-guard/pi`: both guards as a pi extension (`pi install` this package, or
 * `pi -e <path to dist/pi.js>`). The default export is the extension factory pi loads; see
 * docs/pi.md.
 *
 * @packageDocumentation
 */
import { createPiExtension } from './hosts/pi/pi-extension.js';

export { createPiExtension, piCallOutcome, PI_DECISIONS_ENV, PI_MODE_FLAG } from './hosts/pi/pi-extension.js';
export type { PiExtensionApi, PiExtensionContext } from './hosts/pi/pi-extension.js';

/** The extension pi loads: both guards, mode from `--repeated-tool-failure-guard` or the environment (default `shadow`). */
const repeatedToolFailureGuardExtension: ReturnType<typeof createPiExtension> = createPiExtension();
export default repeatedToolFailureGuardExtension;
