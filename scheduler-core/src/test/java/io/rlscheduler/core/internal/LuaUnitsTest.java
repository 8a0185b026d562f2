package io.rlscheduler.core.internal;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Which top-level units of the prelude a script is loaded with. */
class LuaUnitsTest {

    private static final String PRELUDE = String.join("\n",
            "-- header: names in comments reach nothing: g, B",
            "redis.replicate_commands()",
            "local A = 1",
            "local function f() return A end",
            "local function g() return 2 end",
            "-- about h",
            "local B, C = 3, 4",
            "local function h()",
            "  return C",
            "end",
            "local T = {",
            "  x = 1",
            "}",
            "local function uses_t() return T.x end",
            "");

    @Test
    void keepsWhatTheBodyReachesThroughOtherUnitsAndEveryUnitOfNoNamesInOrder() {
        String kept = LuaUnits.reached(LuaUnits.split(PRELUDE), "return f() + h() -- and g, in a comment\nlocal s = 'g'");

        assertThat(kept).contains("-- header", "redis.replicate_commands()", "local A = 1", "local function f()",
                "local B, C = 3, 4", "local function h()\n  return C\nend");
        assertThat(kept).doesNotContain("local function g()", "local T = {", "uses_t");
        assertThat(kept.indexOf("local A = 1")).isLessThan(kept.indexOf("local function f()"));
        assertThat(kept.indexOf("local B, C")).isLessThan(kept.indexOf("local function h()"));
    }

    @Test
    void aTableWhoseClosingBraceIsAtTheFirstColumnStaysOneUnit() {
        String kept = LuaUnits.reached(LuaUnits.split(PRELUDE), "return uses_t()");

        assertThat(kept).contains("local T = {\n  x = 1\n}\nlocal function uses_t()");
        assertThat(kept).doesNotContain("local function f()");
    }

    @Test
    void namesInCommentsAndStringsOfEveryFormAreNotReferences() {
        Set<String> found = LuaUnits.identifiers(String.join("\n",
                "local x = 'a \\' b' .. \"c \\\" d\" -- e",
                "--[==[ f ]] g ]==] y",
                "local z = [[ h ]] .. [=[ i ]] j ]=] .. w[k]",
                "return 0x1F + 1e5 + v2 + 2E-3..after_exponent .. 0x1F..after_hex .. .5 .. 1.5e+3"));

        assertThat(found).contains("local", "x", "y", "z", "w", "k", "return", "v2", "after_exponent", "after_hex");
        assertThat(found).doesNotContain("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "x1F", "e5", "E", "e");
    }

    @Test
    void aLayoutThatCouldHideADefinitionOrDropAnEffectIsRefused() {
        assertThatThrownBy(() -> LuaUnits.split("local A = 1; local B = 2\n"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("one top-level statement a line");
        assertThatThrownBy(() -> LuaUnits.split("local A = 1 local B = 2\n"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("one top-level statement a line");
        assertThatThrownBy(() -> LuaUnits.split("local A = 1\n  local B = 2\n"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("starts indented");
        assertThatThrownBy(() -> LuaUnits.split("local A = 1\n  redis.call('DEL', 'k')\n"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("starts indented");
        assertThatThrownBy(() -> LuaUnits.split("local N = redis.call('INCR', 'k')\n"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("must not call anything");
        assertThatThrownBy(() -> LuaUnits.split("local T = {n = tonumber('1')}\n"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("must not call anything");
        assertThatThrownBy(() -> LuaUnits.split("--[[ an old version:\nlocal function f() return 1 end\n]]\nlocal A = 1\n"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("not closed");
        assertThatThrownBy(() -> LuaUnits.split("local A = 1\r\n"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("line ends");
        // What is allowed: a function's body calls, and its lines are indented inside its block.
        assertThat(LuaUnits.split("local F = function(x)\n  return redis.call('GET', x)\nend\nlocal T = {\n  a = 1,\n}\n"))
                .hasSize(2);
    }

    @Test
    void aDeclarationWhoseNamesGoOnOnTheNextLineIsRefused() {
        assertThatThrownBy(() -> LuaUnits.split("local a, b,\n  c = 1, 2, 3\n"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("on one line");
    }

    /**
     * Every shipped script: a name of the whole prelude that its loaded source uses is declared in
     * it, at the top level, before the body; and the short scripts leave out what they never
     * reach.
     */
    @Test
    void everyShippedScriptDeclaresEveryPreludeNameItUses() throws IOException, URISyntaxException {
        Set<String> preludeNames = new HashSet<>();
        for (String file : List.of("lib", "parking", "submitting", "claiming")) {
            LuaUnits.split(resource(file)).forEach(u -> preludeNames.addAll(u.names()));
        }
        List<String> scripts = scriptNames();
        assertThat(scripts).contains("ack", "finish", "claim", "submit_claim", "register");
        for (String name : scripts) {
            String source = LuaScript.load(name).getSource();
            String prelude = source.substring(0, source.indexOf("local function run_body()\n"));
            Set<String> declared = new HashSet<>();
            LuaUnits.split(prelude).forEach(u -> declared.addAll(u.names()));
            Set<String> used = new HashSet<>(LuaUnits.identifiers(source));
            used.retainAll(preludeNames);
            assertThat(declared).as("the prelude of %s", name).containsAll(used);
        }
        // scripts/lua_workload.py builds the scripts as the loader does where lib.lua names LuaUnits so.
        assertThat(resource("lib")).contains("(LuaUnits)");
        String ack = LuaScript.load("ack").getSource();
        assertThat(ack).contains("local function transition(", "local function check_owned(")
                .doesNotContain("local function take_back(", "local function claim_run(", "local function park(");
    }

    private static List<String> scriptNames() throws IOException, URISyntaxException {
        // The folder of lib.lua: the main scripts (the test resources have a folder of the same name).
        URL lib = LuaUnitsTest.class.getResource("/io/rlscheduler/core/lua/lib.lua");
        try (Stream<Path> files = Files.list(Path.of(lib.toURI()).getParent())) {
            return files.map(p -> p.getFileName().toString())
                    .filter(f -> f.endsWith(".lua"))
                    .map(f -> f.substring(0, f.length() - 4))
                    .filter(n -> !List.of("lib", "parking", "submitting", "claiming", "renew").contains(n))
                    .sorted()
                    .toList();
        }
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = LuaUnitsTest.class.getResourceAsStream("/io/rlscheduler/core/lua/" + name + ".lua")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
