/**
 * Templates written to hold a thread, for the tests of the customer-code workers.
 *
 * ONE_LONG_FILTER_CALL: one `where` over 20,000 items (a list the template builds itself, under the
 * filters' item limit) by a 2,000-step path: about 36 s of one core in a single filter call, which
 * the engine's CPU clock only sees once it returns. Only terminating its worker ends it sooner.
 */
export const ONE_LONG_FILTER_CALL = `{% assign xs = "${Array(19_999).fill('a').join(',')}" | split: "," %}{{ xs | where: "${Array(2_000).fill('a').join('.')}", 1 | size }}`;
