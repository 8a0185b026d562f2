package io.rlscheduler.http.internal;

import java.nio.file.Path;
import java.time.Duration;

/** The HTTP API's settings, as {@link io.rlscheduler.http.HttpApi.Builder} checked them. */
public record Settings(String bindHost, int port, int maxRequestBytes, boolean readOnlyAnonymous, Duration sseWriteTimeout,
                       Duration sseKeepAlive, int requestThreads, Duration tokenCacheTtl, Path tlsChain, Path tlsKey) {
}
