/**
 * qwen-code's prompt id format: `<session id>########<prompt count>` (wire reference §1.1).
 */

/** The session a call belongs to: `session.id`, else the part of the prompt id before `########`. */
export function sessionKeyOf(sessionId: string | undefined, promptId: string): string {
  if (sessionId !== undefined && sessionId !== '') return sessionId;
  const i = promptId.indexOf('########');
  return i > 0 ? promptId.slice(0, i) : promptId;
}

/**
 * Whether `key` is {@link sessionKeyOf}(`sessionId`, `promptId`), compared without building the key
 * (a key string kept from an earlier record has its hash cached; a freshly built one must be hashed).
 */
export function isSessionKeyOf(key: string, sessionId: string | undefined, promptId: string): boolean {
  if (sessionId !== undefined && sessionId !== '') return key === sessionId;
  const i = promptId.indexOf('########');
  return i > 0 ? key.length === i && promptId.startsWith(key) : key === promptId;
}
