/** Exit codes of every evgen command: 0 success, 1 findings or stale output, 2 bad input or usage. */
export const EXIT_OK = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_BAD_INPUT = 2;
