package io.rlscheduler.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code --server}, {@code --token} and {@code --json}, accepted before the command ({@code rls
 * --json ls}) as well as after it ({@code rls ls --json}): every copy of this mixin writes into the
 * root command's copy, which the commands read.
 */
final class GlobalOptions {
    @Spec(Spec.Target.MIXEE)
    private CommandSpec mixee;

    String server;
    String token;
    boolean json;

    private GlobalOptions root() {
        return ((Rls) mixee.root().userObject()).globals;
    }

    @Option(names = "--server", paramLabel = "URL", description = "The server (else RLS_SERVER, the config file's server=, http://127.0.0.1:8080).")
    void setServer(String server) {
        root().server = server;
    }

    @Option(names = "--token", paramLabel = "TOKEN", description = "The API token (else RLS_TOKEN, the config file's token=).")
    void setToken(String token) {
        root().token = token;
    }

    @Option(names = "--json", description = "Print the server's JSON instead of a table.")
    void setJson(boolean json) {
        root().json = json;
    }
}
