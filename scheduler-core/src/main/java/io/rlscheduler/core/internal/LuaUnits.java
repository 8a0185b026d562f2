package io.rlscheduler.core.internal;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The top-level units of {@code lib.lua} and the libraries, and which of them a script reaches.
 *
 * <p>Every script run executes its prelude whole: each top-level table and function is built
 * again at every run, and each script's compiled copy of the prelude stays in Redis's Lua heap,
 * which Redis's collector walks again and again as scripts run (the larger the heap, the more a
 * run costs: docs/benchmarks.md, "The prelude a script reaches"). So a script is loaded with only
 * the units its body and the epilogue reach, directly or through other units.
 *
 * <p>A unit starts at a line that begins, in the first column, with {@code local}, and runs to
 * the next: a {@code local function}, or a {@code local} declaration with or without values (the
 * names it declares are the unit's names); the comment lines and closing lines ({@code end}, a
 * closing brace) at the first column belong to the unit they follow. Any other statement at the first
 * column starts a unit of no names, which is always kept: nothing that runs for its effect is
 * ever left out. A unit is reached when a name it declares occurs as an identifier, outside
 * comments and string literals, in the script, the epilogue or a reached unit. The test is by
 * spelling: a local of a function that shares a unit's name keeps that unit too, which costs a
 * little and is never wrong; a name is never missed, since Lua has no other way to reach a local
 * than by writing its name. Units keep their order, so every definition still comes before its
 * uses.
 */
final class LuaUnits {

    private static final Pattern LOCAL_FUNCTION = Pattern.compile("^local\\s+function\\s+([A-Za-z_][A-Za-z0-9_]*)");
    private static final Pattern LOCAL_NAMES = Pattern.compile("^local\\s+([A-Za-z_][A-Za-z0-9_]*(?:\\s*,\\s*[A-Za-z_][A-Za-z0-9_]*)*)");
    private static final Pattern CLOSER = Pattern.compile("^(end|}|\\)|\\]|end\\)|}\\))\\s*(--.*)?$");

    /** One top-level unit: its text (lines joined by newlines), the names it declares and the identifiers it holds. */
    record Unit(String text, Set<String> names, Set<String> references) {
    }

    private LuaUnits() {
    }

    /** Splits the source of lib.lua or a library into its top-level units, in order. */
    static List<Unit> split(String source) {
        List<List<String>> groups = new ArrayList<>();
        List<String> current = new ArrayList<>();
        for (String line : source.split("\n", -1)) {
            boolean startsUnit = line.startsWith("local ")
                    || (!line.isEmpty() && !Character.isWhitespace(line.charAt(0)) && !line.startsWith("--")
                    && !CLOSER.matcher(line).matches());
            if (startsUnit && !current.isEmpty()) {
                groups.add(current);
                current = new ArrayList<>();
            }
            current.add(line);
        }
        if (!current.isEmpty()) {
            groups.add(current);
        }
        List<Unit> units = new ArrayList<>(groups.size());
        for (List<String> lines : groups) {
            String text = String.join("\n", lines);
            units.add(new Unit(text, declared(lines), identifiers(text)));
        }
        return units;
    }

    /**
     * The units of {@code prelude} (lib.lua and the libraries, in order) that {@code body} reaches,
     * directly or through other units, plus every unit of no names, joined in their order.
     */
    static String reached(List<Unit> prelude, String body) {
        Set<String> needed = new HashSet<>(identifiers(body));
        boolean[] keep = new boolean[prelude.size()];
        boolean changed = true;
        while (changed) {
            changed = false;
            for (int i = 0; i < prelude.size(); i++) {
                Unit unit = prelude.get(i);
                if (!keep[i] && (unit.names().isEmpty() || unit.names().stream().anyMatch(needed::contains))) {
                    keep[i] = true;
                    needed.addAll(unit.references());
                    changed = true;
                }
            }
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < prelude.size(); i++) {
            if (keep[i]) {
                out.append(prelude.get(i).text()).append('\n');
            }
        }
        return out.toString();
    }

    /** The names a unit's first line declares: none for a unit that is not a {@code local}. */
    private static Set<String> declared(List<String> lines) {
        String first = lines.stream().filter(l -> !l.startsWith("--") && !l.isBlank()).findFirst().orElse("");
        Matcher function = LOCAL_FUNCTION.matcher(first);
        if (function.find()) {
            return Set.of(function.group(1));
        }
        Matcher names = LOCAL_NAMES.matcher(first);
        if (names.find()) {
            if (first.substring(names.end()).strip().startsWith(",")) {
                // Its names go on on the next line, which this reader does not follow.
                throw new IllegalStateException("a top-level local declaration must name its locals on one line: " + first);
            }
            Set<String> out = new LinkedHashSet<>();
            for (String name : names.group(1).split(",")) {
                out.add(name.strip());
            }
            return out;
        }
        return Set.of();
    }

    /**
     * Every identifier of Lua source outside comments and string literals (short strings with
     * their escapes, long brackets of any level, long comments), including keywords and names after
     * a dot: more than the names it uses, never fewer.
     */
    static Set<String> identifiers(String source) {
        Set<String> out = new HashSet<>();
        int n = source.length();
        int i = 0;
        while (i < n) {
            char c = source.charAt(i);
            if (c == '-' && i + 1 < n && source.charAt(i + 1) == '-') {
                int level = longBracket(source, i + 2);
                if (level >= 0) {
                    i = closeLongBracket(source, i + 2 + level + 2, level);
                } else {
                    int eol = source.indexOf('\n', i);
                    i = eol < 0 ? n : eol + 1;
                }
            } else if (c == '[' && longBracket(source, i) >= 0) {
                int level = longBracket(source, i);
                i = closeLongBracket(source, i + level + 2, level);
            } else if (c == '\'' || c == '"') {
                i++;
                while (i < n && source.charAt(i) != c && source.charAt(i) != '\n') {
                    i += source.charAt(i) == '\\' ? 2 : 1;
                }
                i++;
            } else if (Character.isLetter(c) || c == '_') {
                int start = i;
                while (i < n && (Character.isLetterOrDigit(source.charAt(i)) || source.charAt(i) == '_')) {
                    i++;
                }
                out.add(source.substring(start, i));
            } else if (Character.isDigit(c)) {
                // A number, hexadecimal and exponents included: none of it is a name.
                while (i < n && (Character.isLetterOrDigit(source.charAt(i)) || source.charAt(i) == '.')) {
                    i++;
                }
            } else {
                i++;
            }
        }
        return out;
    }

    /** The level of a long bracket opening at {@code at} ({@code [[} is 0, {@code [=[} 1...), or -1. */
    private static int longBracket(String source, int at) {
        if (at >= source.length() || source.charAt(at) != '[') {
            return -1;
        }
        int level = 0;
        int i = at + 1;
        while (i < source.length() && source.charAt(i) == '=') {
            level++;
            i++;
        }
        return i < source.length() && source.charAt(i) == '[' ? level : -1;
    }

    /** Where the text after the long bracket of {@code level} that closes at or after {@code from} goes on. */
    private static int closeLongBracket(String source, int from, int level) {
        String close = "]" + "=".repeat(level) + "]";
        int end = source.indexOf(close, from);
        return end < 0 ? source.length() : end + close.length();
    }
}
