package io.rlscheduler.core.internal;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One Lua script of {@code io/rlscheduler/core/lua/}, prefixed with what it reaches of
 * {@code lib.lua} and its libraries ({@link #load}), run by SHA
 * with EVALSHA. When Redis answers NOSCRIPT (its script cache was flushed, or it restarted), the
 * script is sent whole with EVAL, which also caches it again. Thread-safe.
 */
public final class LuaScript {

    private static final String FOLDER = "/io/rlscheduler/core/lua/";

    private final String name;
    private final String source;
    private final String sha;

    private LuaScript(String name, String source) {
        this.name = name;
        this.source = source;
        this.sha = sha1(source);
    }

    /** The header line by which a script names the libraries it needs: {@code -- libraries: a, b}. */
    private static final String LIBRARIES = "-- libraries:";

    /**
     * Loads {@code <name>.lua} with the shared prelude and, between the two, the libraries the
     * script names in a header line {@code -- libraries: claiming, submitting} (files of local
     * functions that more than one script runs), in that order; the script's own text becomes the
     * body of a function, followed by an epilogue that brings the fair sets of the owners the run
     * touched up to date (lib.lua's flush_owners) and writes its buffered task events. Of the
     * prelude and the libraries, only the top-level units the body and the epilogue reach are
     * kept ({@link LuaUnits}).
     */
    public static LuaScript load(String name) {
        String script = resource(name);
        List<LuaUnits.Unit> prelude = new ArrayList<>(LuaUnits.split(resource("lib")));
        for (String line : script.split("\n")) {
            if (!line.startsWith("--")) {
                break; // the header is over
            }
            if (line.startsWith(LIBRARIES)) {
                for (String library : line.substring(LIBRARIES.length()).split(",")) {
                    prelude.addAll(LuaUnits.split(resource(library.strip())));
                }
            }
        }
        // The body runs as a function so that the task events it buffered are written however it
        // returns (lib.lua's flush_events), and also when it raises an error after writing: what
        // a run changed is never left without its events, nor its owners' fair sets out of date. (The price: Redis reports such an
        // error at the epilogue's line, not the body's; the message itself is unchanged.)
        String body = "local function run_body()\n" + script + "\nend\n"
                + "local body_ok, body_result = pcall(run_body)\n"
                + "flush_owners()\n"
                + "flush_events()\n"
                + "if not body_ok then error(body_result, 0) end\n"
                + "return body_result\n";
        return new LuaScript(name, LuaUnits.reached(prelude, body) + body);
    }

    /**
     * Loads {@code <name>.lua} as it is, without the prelude, the libraries and the epilogue: for a
     * script on a path hot enough that the prelude would cost more than its work (it then keys
     * and encodes on its own, and writes no task events).
     */
    public static LuaScript loadBare(String name) {
        return new LuaScript(name, resource(name));
    }

    /** Returns the script's name (its file name without ".lua"). */
    public String getName() {
        return name;
    }

    /** Returns the full source (prelude and script), as SCRIPT LOAD and EVAL take it. */
    public String getSource() {
        return source;
    }

    /** Returns the SHA-1 of the full source, as EVALSHA takes it. */
    public String getSha() {
        return sha;
    }

    /**
     * Runs the script; the result is the single string every script of the core returns. A failed
     * run fails the future with the core's exception for it ({@link RedisFailures#translate}): a
     * move the script's transition table refused is an
     * {@link io.rlscheduler.core.IllegalTaskStateException}, a run Redis did not answer within
     * the connection's timeout a {@link io.rlscheduler.core.SchedulerTimeoutException}.
     *
     * @param redis async commands of a connection
     * @param keys  every key the script touches
     * @param args  its arguments
     * @return the script's reply
     */
    public CompletableFuture<String> run(RedisAsyncCommands<String, String> redis, String[] keys, String... args) {
        CompletableFuture<String> run = redis.<String>evalsha(sha, ScriptOutputType.VALUE, keys, args).toCompletableFuture()
                .exceptionallyCompose(error -> RedisFailures.unwrap(error) instanceof RedisNoScriptException
                        ? redis.<String>eval(source, ScriptOutputType.VALUE, keys, args).toCompletableFuture()
                        : CompletableFuture.failedFuture(error));
        return RedisFailures.translated(run, redis.getStatefulConnection().getTimeout());
    }

    private static String resource(String name) {
        try (InputStream in = LuaScript.class.getResourceAsStream(FOLDER + name + ".lua")) {
            if (in == null) {
                throw new IllegalStateException("missing script resource " + FOLDER + name + ".lua");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read script " + name, e);
        }
    }

    private static String sha1(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required of every Java runtime", e);
        }
    }
}
