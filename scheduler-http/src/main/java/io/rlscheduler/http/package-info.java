/**
 * The HTTP API, its live streams and the web dashboard, embedded next to a master
 * ({@link io.rlscheduler.http.HttpApi}); see docs/http.md.
 */
package io.rlscheduler.http;
