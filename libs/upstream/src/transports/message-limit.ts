/**
 * The longest message an upstream may send, in characters of JSON text: a stdio line, the
 * data of one SSE event, a JSON response body. An upstream past it is treated as broken: the
 * message is dropped and the connection closed (the reconnect backoff takes over), so one
 * upstream cannot grow the daemon's memory without bound, nor make a string join throw
 * (V8 strings end near 2^29 characters). It is 4x the 16 MiB the daemon accepts from hosts
 * because results (file contents, base64 images) are legitimately larger than requests.
 */
export const MAX_MESSAGE_CHARS = 64 * 1024 * 1024;
