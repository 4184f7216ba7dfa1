/**
 * The longest resource URI a host may send (resources/read, subscribe, unsubscribe, and a
 * completion/complete ref.uri), in characters. Every step a URI goes through costs time in
 * proportion to its length, once per policy rule and once per upstream template: a 4 MiB
 * URI held the event loop (every other host) for 5 s against 50 resource rules, 16 MiB for
 * 18 s and had the upstream's process exit. RFC 9110 §4.1 asks for URIs of at least 8,000
 * octets to be supported; 16 Ki characters is twice that, and holds the longest Linux path
 * (PATH_MAX, 4,096 bytes) in a file: URI with every byte percent-encoded. A resource URI
 * names a resource; it does not carry one (as a data: URI would). An upstream's resource or
 * template whose URI is longer is left out of its lists: no host could ask for it.
 */
export const MAX_URI_CHARS = 16 * 1024;
