/** This package's version, used as the instrumentation scope version. Keep in step with package.json. */
export const VERSION = '0.1.0';
