package io.rlscheduler.cli;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code rls}, the command line of rl-scheduler: it speaks the HTTP API (docs/http.md) and nothing
 * else. docs/cli.md describes every command, the configuration and the exit codes.
 */
@Command(name = "rls", mixinStandardHelpOptions = true, version = "rls 0.1.0",
        description = "Submit, follow and compare training runs on an rl-scheduler master.",
        subcommands = {
            SubmitCommand.class, SweepCommand.class, LsCommand.class, ShowCommand.class,
            LogsCommand.class, MetricsCommand.class, WhyCommand.class, CancelCommand.class,
            WaitCommand.class, CompareCommand.class, WorkersCommand.class, QueueCommand.class,
            TokenCommand.class, MeCommand.class, CommandLine.HelpCommand.class
        },
        footer = {"", "Exit codes: 0 ok (wait: SUCCEEDED), 1 FAILED, 2 usage error, 3 CANCELLED,",
            "4 TIMED_OUT, 5 wait timed out, 6 server, auth or network error.",
            "Server and token: --server/--token, else RLS_SERVER/RLS_TOKEN, else the file",
            "RLS_CONFIG or ~/.config/rls/config.properties (server=, token=).",
            "See docs/cli.md."})
public final class Rls implements Runnable {
    final GlobalOptions globals = new GlobalOptions();

    @Mixin
    private GlobalOptions globalsMixin = globals;

    final Map<String, String> env;
    final Path home;
    final boolean stderrTerminal;

    Rls(Map<String, String> env, Path home, boolean stderrTerminal) {
        this.env = env;
        this.home = home;
        this.stderrTerminal = stderrTerminal;
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(new CommandLine(this), "name a command (rls --help lists them)");
    }

    /** The server and token, by the flags, the environment and the config file. */
    Config config() {
        return Config.resolve(globals.server, globals.token, env, home);
    }

    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
        PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
        boolean tty = "1".equals(System.getProperty("rls.stderrTty")) || System.console() != null;
        int code = run(args, out, err, System.getenv(), Path.of(System.getProperty("user.home")), tty);
        out.flush();
        err.flush();
        System.exit(code);
    }

    /** Runs one command line with the given streams and environment; returns the exit code. */
    static int run(String[] args, PrintWriter out, PrintWriter err, Map<String, String> env, Path home,
            boolean stderrTerminal) {
        Rls rls = new Rls(env, home, stderrTerminal);
        CommandLine cmd = new CommandLine(rls);
        cmd.setOut(out);
        cmd.setErr(err);
        cmd.setExecutionExceptionHandler((e, line, parsed) -> {
            line.getErr().flush();
            line.getOut().flush();
            if (e instanceof RlsException) {
                err.println("rls: " + e.getMessage());
                err.flush();
                return ((RlsException) e).exitCode();
            }
            err.println("rls: " + (e.getMessage() != null ? e.getMessage() : e.getClass().getName()));
            err.flush();
            return ExitCodes.ERROR;
        });
        cmd.setParameterExceptionHandler((e, argv) -> {
            CommandLine at = e.getCommandLine();
            err.println("rls: " + e.getMessage());
            err.println("Try '" + at.getCommandSpec().qualifiedName() + " --help' for more information.");
            err.flush();
            return ExitCodes.USAGE;
        });
        int code = cmd.execute(args);
        out.flush();
        err.flush();
        return code;
    }
}
