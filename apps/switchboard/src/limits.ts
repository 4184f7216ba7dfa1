/** The largest message a host may send: an HTTP body, or one line on `switchboard stdio`. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;
