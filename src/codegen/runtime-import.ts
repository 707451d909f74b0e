/** Module specifier generated code imports the runtime from unless configured otherwise. */
export const DEFAULT_RUNTIME_IMPORT = 'evgen-runtime';
