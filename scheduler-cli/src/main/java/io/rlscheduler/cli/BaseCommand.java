package io.rlscheduler.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** What every command shares: the global options, the API client, the output streams. */
abstract class BaseCommand implements Callable<Integer> {
    @Mixin
    GlobalOptions globalOptions;

    @Spec
    CommandSpec spec;

    private Api api;

    Rls rls() {
        return (Rls) spec.root().userObject();
    }

    boolean json() {
        return rls().globals.json;
    }

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    PrintWriter err() {
        return spec.commandLine().getErr();
    }

    Api api() {
        if (api == null) {
            Config config = rls().config();
            api = new Api(config.server(), config.token());
        }
        return api;
    }

    /** Prints one JSON document (indented) on stdout. */
    void printJson(Object node) {
        try {
            out().println(Api.JSON.copy().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(node));
        } catch (JsonProcessingException e) {
            throw new RlsException(ExitCodes.ERROR, "cannot print JSON: " + e.getMessage());
        }
        out().flush();
    }

    /** Prints one JSON document on one line (for streams of documents, JSON Lines). */
    void printJsonLine(JsonNode node) {
        out().println(node.toString());
        out().flush();
    }

    @Override
    public final Integer call() {
        return execute();
    }

    abstract int execute();
}
