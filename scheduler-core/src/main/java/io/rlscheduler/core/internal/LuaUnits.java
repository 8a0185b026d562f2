package io.rlscheduler.core.internal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
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
 * names it declares are the unit's names); comment lines and closing lines ({@code end}, a closing
 * brace, parenthesis or bracket) at the first column belong to the unit they follow. Any other
 * statement at the first column starts a unit of no names, which is always kept. A unit is
 * reached when a name it declares occurs as an identifier, outside comments and string literals,
 * in the script, the epilogue or a reached unit. The test is by spelling: a local of a function
 * that shares a unit's name keeps that unit too, which costs a little and is never wrong. Units
 * keep their order, so every definition still comes before its uses.
 *
 * <p>So that no definition can hide in another unit and no effect can be left out with a unit,
 * a unit is refused (an {@link IllegalStateException} when the script loads) unless: its blocks
 * and brackets close within it; each top-level statement has a line of its own and starts in the
 * first column; a declaration names all its locals on its first line and its values call nothing
 * (outside the bodies of functions); long strings and long comments close; and lines end with LF.
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
            Set<String> names = declared(lines);
            checkLayout(text, !names.isEmpty() && !LOCAL_FUNCTION.matcher(firstCode(lines)).find());
            units.add(new Unit(text, names, identifiers(text)));
        }
        return units;
    }

    /**
     * Refuses a unit whose text breaks the rules the split relies on, so that an edit of lib.lua
     * or a library that would let a script lose a definition fails when the script loads, not
     * when a rare path runs: its blocks and brackets must close within it, no statement may
     * follow another on a line or start indented outside every block, and a declaration's values
     * may not call anything (a unit no script reaches is left out, and its calls with it).
     */
    private static void checkLayout(String unit, boolean declaration) {
        Deque<String> open = new ArrayDeque<>();
        int[] functions = {0};
        boolean[] lineStart = {true};
        scan(unit, (token, at) -> {
            boolean first = lineStart[0];
            lineStart[0] = token.equals("\n");
            if (token.equals("\n")) {
                return;
            }
            if (open.isEmpty() && first && at > 0 && unit.charAt(at - 1) != '\n' && !isCloser(token)) {
                throw layout("a statement outside every block starts indented", unit);
            }
            if (open.isEmpty() && (token.equals(";") || (token.equals("local") && !first))) {
                throw layout("one top-level statement a line, starting in the first column", unit);
            }
            if (declaration && functions[0] == 0 && token.equals("(")) {
                throw layout("a top-level declaration's values must not call anything", unit);
            }
            switch (token) {
                case "function", "if", "do", "repeat", "{", "(", "[" -> {
                    open.push(token);
                    functions[0] += token.equals("function") ? 1 : 0;
                }
                case "end", "until", "}", ")", "]" -> {
                    if (open.isEmpty()) {
                        throw layout("a block or bracket closes that the unit did not open", unit);
                    }
                    functions[0] -= open.pop().equals("function") ? 1 : 0;
                }
                default -> {
                }
            }
        });
        if (!open.isEmpty()) {
            throw layout("a block or bracket stays open past the unit's end", unit);
        }
    }

    private static boolean isCloser(String token) {
        return token.equals("end") || token.equals("}") || token.equals(")") || token.equals("]") || token.equals("until");
    }

    private static IllegalStateException layout(String rule, String unit) {
        int eol = unit.indexOf('\n');
        return new IllegalStateException("lib.lua or a library breaks the layout LuaUnits reads (" + rule + "): in the unit "
                + "starting '" + (eol < 0 ? unit : unit.substring(0, eol)) + "'");
    }

    private static String firstCode(List<String> lines) {
        return lines.stream().filter(l -> !l.startsWith("--") && !l.isBlank()).findFirst().orElse("");
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
        String first = firstCode(lines);
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
     * Every identifier of Lua source outside comments and string literals, including keywords and
     * names after a dot: more than the names it uses, never fewer.
     */
    static Set<String> identifiers(String source) {
        Set<String> out = new HashSet<>();
        scan(source, (token, at) -> {
            if (isNameStart(token.charAt(0))) {
                out.add(token);
            }
        });
        return out;
    }

    /** What {@link #scan} reports: a name or keyword, one character of punctuation, or a line's end ("\n"). */
    private interface Tokens {
        void token(String token, int at);
    }

    /**
     * Reads Lua 5.1 source as its lexer does, as far as units need it: names and keywords, each
     * character of punctuation and each line's end (outside long strings and long comments) are
     * reported; short strings with their escapes, long strings and comments of any level, and
     * numbers (hexadecimal and exponents included) are skipped.
     */
    private static void scan(String source, Tokens tokens) {
        int n = source.length();
        int i = 0;
        while (i < n) {
            char c = source.charAt(i);
            if (c == '\r') {
                throw new IllegalStateException("Lua source of the scheduler has Unix line ends only");
            } else if (c == '-' && i + 1 < n && source.charAt(i + 1) == '-') {
                int level = longBracket(source, i + 2);
                if (level >= 0) {
                    i = closeLongBracket(source, i + 2 + level + 2, level);
                } else {
                    int eol = source.indexOf('\n', i);
                    i = eol < 0 ? n : eol;
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
            } else if (isNameStart(c)) {
                int start = i;
                while (i < n && (isNameStart(source.charAt(i)) || isDigit(source.charAt(i)))) {
                    i++;
                }
                tokens.token(source.substring(start, i), start);
            } else if (isDigit(c) || (c == '.' && i + 1 < n && isDigit(source.charAt(i + 1)))) {
                // Lua 5.1's read_numeral: digits and dots, an exponent's sign, then letters, digits, '_'.
                while (i < n && (isDigit(source.charAt(i)) || source.charAt(i) == '.')) {
                    i++;
                }
                if (i < n && (source.charAt(i) == 'e' || source.charAt(i) == 'E')) {
                    i++;
                    if (i < n && (source.charAt(i) == '+' || source.charAt(i) == '-')) {
                        i++;
                    }
                }
                while (i < n && (isNameStart(source.charAt(i)) || isDigit(source.charAt(i)))) {
                    i++;
                }
            } else {
                if (!Character.isWhitespace(c) || c == '\n') {
                    tokens.token(c == '\n' ? "\n" : String.valueOf(c), i);
                }
                i++;
            }
        }
    }

    private static boolean isNameStart(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
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
        if (end < 0) {
            throw new IllegalStateException("a long string or long comment is not closed: " + source.substring(from - level - 2,
                    Math.min(source.length(), from + 40)));
        }
        return end + close.length();
    }
}
