/**
 * The `Authorization` header of OAuth client authentication with HTTP Basic
 * (RFC 6749 §2.3.1, `client_secret_basic`): the client id and secret are
 * form-encoded (application/x-www-form-urlencoded, so a space is `+`) before
 * they are joined with `:` and base64-encoded. Form-encoded text is ASCII,
 * so `btoa` encodes it as is.
 */
export function basicAuthorization(clientId: string, clientSecret: string): string {
  return `Basic ${btoa(`${formEncode(clientId)}:${formEncode(clientSecret)}`)}`;
}

/** Reads a part of such a header back (what a token endpoint does): `+` is a space, then percent-decoding. */
export function formDecode(value: string): string {
  return decodeURIComponent(value.replaceAll("+", " "));
}

function formEncode(value: string): string {
  return encodeURIComponent(value).replaceAll("%20", "+");
}
