package io.rlscheduler.http.internal;

import io.netty.handler.codec.http.HttpMethod;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Consumer;

/** The API's routes: a method and a path pattern ({@code {name}} matches one segment) to a handler. */
final class Router {

    /** Who may call a route. */
    enum Access {
        /** Anyone, no token: the OpenAPI document. */
        PUBLIC,
        /** A token, or none when anonymous reads are on. */
        READ,
        /** A token. */
        USER,
        /** An admin's token. */
        ADMIN
    }

    record Route(HttpMethod method, String pattern, String[] segments, Access access, Consumer<Exchange> handler) {
    }

    record Match(Route route, Map<String, String> params, String allow) {
    }

    private final List<Route> routes = new ArrayList<>();

    void add(HttpMethod method, String pattern, Access access, Consumer<Exchange> handler) {
        routes.add(new Route(method, pattern, pattern.substring(1).split("/"), access, handler));
    }

    List<Route> routes() {
        return List.copyOf(routes);
    }

    /** Returns the route for the request; with a null route and the methods allowed when only the method differs; null for none. */
    Match match(HttpMethod method, String path) {
        String[] parts = path.length() > 1 && path.endsWith("/") ? path.substring(1, path.length() - 1).split("/", -1)
                : path.substring(1).split("/", -1);
        TreeSet<String> allowed = new TreeSet<>();
        for (Route r : routes) {
            Map<String, String> params = params(r.segments(), parts);
            if (params == null) {
                continue;
            }
            if (r.method().equals(method) || (method.equals(HttpMethod.HEAD) && r.method().equals(HttpMethod.GET))) {
                return new Match(r, params, null);
            }
            allowed.add(r.method().name());
        }
        return allowed.isEmpty() ? null : new Match(null, Map.of(), String.join(", ", allowed));
    }

    private static Map<String, String> params(String[] pattern, String[] parts) {
        if (pattern.length != parts.length) {
            return null;
        }
        Map<String, String> params = null;
        for (int i = 0; i < pattern.length; i++) {
            String p = pattern[i];
            if (p.startsWith("{")) {
                if (parts[i].isEmpty()) {
                    return null;
                }
                if (params == null) {
                    params = new LinkedHashMap<>();
                }
                params.put(p.substring(1, p.length() - 1), parts[i]);
            } else if (!p.equals(parts[i])) {
                return null;
            }
        }
        return params == null ? Map.of() : params;
    }
}
