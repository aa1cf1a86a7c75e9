/**
 * Whether a request failed only because its connection to the server went away (the server
 * stopped or was restarted) before the answer came: vscode-jsonrpc rejects such requests with
 * these codes. A view asking at that moment shows nothing for now and is redrawn when the
 * session reopens, instead of surfacing "Pending response rejected since connection got
 * disposed" as an error notification.
 */
const PENDING_RESPONSE_REJECTED = -32097;
const CONNECTION_INACTIVE = -32096;

export function connectionLost(error: unknown): boolean {
  if (typeof error !== "object" || error === null || !("code" in error)) return false;
  const code = error.code;
  return code === PENDING_RESPONSE_REJECTED || code === CONNECTION_INACTIVE;
}
