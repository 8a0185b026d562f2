package io.rlscheduler.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "token", mixinStandardHelpOptions = true, description = "Make, list and revoke API tokens.",
        subcommands = {TokenCommand.Create.class, TokenCommand.Revoke.class, TokenCommand.Ls.class})
final class TokenCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "name a token command: create, revoke or ls");
    }

    @Command(name = "create", mixinStandardHelpOptions = true,
            description = {"Make a token; its secret is printed once, alone on stdout:",
                "export RLS_TOKEN=$(rls token create)"})
    static final class Create extends BaseCommand {
        @Option(names = "--user", paramLabel = "USER", description = "Whose token (default: yours; others' need an admin token).")
        String user;

        @Option(names = "--admin", description = "An admin token (admin tokens only).")
        boolean admin;

        @Override
        int execute() {
            String forUser = user != null ? user : api().get("/api/v1/me").path("user").asText();
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("user", forUser);
            body.put("admin", admin);
            JsonNode token = api().post("/api/v1/tokens", body);
            if (json()) {
                printJson(token);
                return ExitCodes.OK;
            }
            out().println(token.path("token").asText());
            out().flush();
            err().println("token " + token.path("id").asText() + " for " + token.path("user").asText()
                    + (token.path("admin").asBoolean() ? " (admin)" : "") + "; the secret above is shown only now");
            err().flush();
            return ExitCodes.OK;
        }
    }

    @Command(name = "revoke", mixinStandardHelpOptions = true, description = "Revoke a token by its id (tk-...).")
    static final class Revoke extends BaseCommand {
        @Parameters(index = "0", paramLabel = "ID", description = "The token's id (not its secret).")
        String id;

        @Override
        int execute() {
            JsonNode answer = api().delete("/api/v1/tokens/" + Api.seg(id));
            if (json()) {
                printJson(answer);
            } else {
                out().println("revoked " + id);
                out().flush();
            }
            return ExitCodes.OK;
        }
    }

    @Command(name = "ls", mixinStandardHelpOptions = true, description = "List tokens (yours, or all with an admin token).")
    static final class Ls extends BaseCommand {
        @Override
        int execute() {
            JsonNode answer = api().get("/api/v1/tokens");
            if (json()) {
                printJson(answer);
                return ExitCodes.OK;
            }
            Table t = new Table("ID", "USER", "ADMIN", "CREATED", "LAST USED");
            answer.path("tokens").forEach(k -> t.row(k.path("id").asText(), Format.text(k.get("user")),
                    k.path("admin").asBoolean() ? "yes" : "no", Format.time(k.get("createdAt")), Format.ago(k.get("lastUsedAt"))));
            t.print(out());
            return ExitCodes.OK;
        }
    }
}
