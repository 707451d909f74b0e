/**
 * Passwords out of what the operator commands print: database and broker URLs carry them in the
 * userinfo (`postgres://user:secret@host`) or as a query parameter (`?password=secret`), and
 * drivers repeat URLs in their error messages.
 */

/** Query parameters that carry a secret in database and broker URLs. */
const SECRET_PARAMETERS =
  'password|passwd|pass|pwd|sslpassword|secret|token|access_token|api_key|apikey';
const SECRET_PARAMETER = new RegExp(`^(?:${SECRET_PARAMETERS})$`, 'i');
const SECRET_IN_QUERY = new RegExp(`([?&;](?:${SECRET_PARAMETERS})=)[^&;\\s]*`, 'gi');

/** A URL without its password (in the userinfo or a query parameter), for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    for (const key of new Set(parsed.searchParams.keys()))
      if (SECRET_PARAMETER.test(key)) parsed.searchParams.set(key, '***');
    return parsed.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/**
 * Free text (a driver's error message) with every password that looks like one in a URL
 * removed: `user:secret@host` and `password=secret` query parameters.
 */
export function redactText(text: string): string {
  return text.replace(/(\/\/[^/\s:@]*:)[^@\s/]*@/g, '$1***@').replace(SECRET_IN_QUERY, '$1***');
}
