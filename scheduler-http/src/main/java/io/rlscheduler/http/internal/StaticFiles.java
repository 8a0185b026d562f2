package io.rlscheduler.http.internal;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The dashboard's files, from this module's jar ({@code dashboard/}), and uPlot's from its WebJar,
 * read once and kept. Names are checked against a strict pattern before any lookup: no path
 * reaches the class loader that was not one of ours.
 */
final class StaticFiles {

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]{0,100}");
    private static final String DASHBOARD = "/io/rlscheduler/http/dashboard/";
    private static final String UPLOT = "/META-INF/resources/webjars/uplot/" + uplotVersion() + "/dist/";
    private static final Map<String, String> TYPES = Map.of("html", "text/html; charset=utf-8", "js",
            "text/javascript; charset=utf-8", "css", "text/css; charset=utf-8", "svg", "image/svg+xml", "png", "image/png",
            "json", "application/json; charset=utf-8");

    private record File(byte[] bytes, String type) {
    }

    private final Map<String, File> cache = new ConcurrentHashMap<>();

    /** Serves {@code path} if it is one of the dashboard's; returns false when it is not ours. */
    boolean serve(Exchange ex) {
        String path = ex.path();
        String resource;
        if (path.equals("/") || path.equals("/index.html")) {
            resource = DASHBOARD + "index.html";
        } else if (path.startsWith("/ui/vendor/uplot/")) {
            String name = path.substring("/ui/vendor/uplot/".length());
            resource = NAME.matcher(name).matches() ? UPLOT + name : null;
        } else if (path.startsWith("/ui/")) {
            String name = path.substring("/ui/".length());
            resource = NAME.matcher(name).matches() ? DASHBOARD + name : null;
        } else {
            return false;
        }
        File file = resource == null ? null : cache.computeIfAbsent(resource, StaticFiles::load);
        if (file == null) {
            ex.error(ApiException.notFound("no such file: " + path), null);
            return true;
        }
        ex.answered = HttpResponseStatus.OK;
        Responses.bytes(ex.channel, ex.keepAlive, HttpResponseStatus.OK, file.type(), Unpooled.wrappedBuffer(file.bytes()),
                Map.of("Content-Security-Policy", "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'"));
        return true;
    }

    private static File load(String resource) {
        try (InputStream in = StaticFiles.class.getResourceAsStream(resource)) {
            if (in == null) {
                return null; // not kept: the cache holds our files only, whatever names are asked for
            }
            String ext = resource.substring(resource.lastIndexOf('.') + 1);
            return new File(in.readAllBytes(), TYPES.getOrDefault(ext, "application/octet-stream"));
        } catch (IOException e) {
            return null;
        }
    }

    private static String uplotVersion() {
        try (InputStream in = StaticFiles.class.getResourceAsStream("/META-INF/maven/org.webjars.npm/uplot/pom.properties")) {
            if (in != null) {
                java.util.Properties p = new java.util.Properties();
                p.load(in);
                return p.getProperty("version", "1.6.30");
            }
        } catch (IOException e) {
            // the version the build names
        }
        return "1.6.30";
    }
}
