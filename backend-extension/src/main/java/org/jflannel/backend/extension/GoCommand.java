package org.jflannel.backend.extension;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How upstream's extension backend turns a configured command into an argv (REFERENCE §15): the
 * string is split on white space as Go's {@code strings.Fields} does, then every field has its
 * {@code $VAR} and {@code ${VAR}} references expanded as Go's {@code os.Expand} does, from the
 * given variables. No shell is involved: quotes, pipes and redirections are plain characters.
 * Written out here (not a library) because its value is being byte-for-byte Go's behaviour.
 */
final class GoCommand {
    private GoCommand() {
    }

    /** The argv of {@code command} with {@code vars} expanded; empty when the command has no field. */
    static List<String> argv(String command, Map<String, String> vars) {
        List<String> out = new ArrayList<>();
        for (String field : fields(command)) {
            out.add(expand(field, vars));
        }
        return out;
    }

    /** Go's {@code strings.Fields}: the runs of characters between white space (Go's {@code unicode.IsSpace}). */
    static List<String> fields(String s) {
        List<String> out = new ArrayList<>();
        int start = -1;
        for (int i = 0; i < s.length(); i++) {
            if (isSpace(s.charAt(i))) {
                if (start >= 0) {
                    out.add(s.substring(start, i));
                    start = -1;
                }
            } else if (start < 0) {
                start = i;
            }
        }
        if (start >= 0) {
            out.add(s.substring(start));
        }
        return out;
    }

    /** Go's {@code unicode.IsSpace} (every such code point is in the BMP, so a char suffices). */
    static boolean isSpace(char c) {
        switch (c) {
            case '\t', '\n', '\u000B', '\f', '\r', ' ', '\u0085', '\u00A0', '\u1680', '\u2028', '\u2029', '\u202F',
                    '\u205F', '\u3000':
                return true;
            default:
                return c >= '\u2000' && c <= '\u200A';
        }
    }

    /**
     * Go's {@code os.Expand}: {@code $name} (letters, digits, underscore), {@code ${name}}, and the
     * one-character specials {@code $*}, {@code $#}, {@code $$}, {@code $@}, {@code $!}, {@code $?},
     * {@code $-}, {@code $0}..{@code $9}; an unknown name expands to nothing; a {@code $} followed by
     * none of these stays; the bad syntax {@code ${}}, and the {@code ${} of an unclosed one, are dropped.
     */
    static String expand(String s, Map<String, String> vars) {
        StringBuilder out = new StringBuilder(s.length());
        int i = 0;
        for (int j = 0; j < s.length(); j++) {
            if (s.charAt(j) != '$' || j + 1 >= s.length()) {
                continue;
            }
            out.append(s, i, j);
            String rest = s.substring(j + 1);
            int[] width = new int[1];
            String name = shellName(rest, width);
            if (name.isEmpty() && width[0] == 0) {
                out.append('$'); // "$" not followed by a name: left as it is
            } else if (!name.isEmpty()) {
                out.append(vars.getOrDefault(name, ""));
            } // else bad syntax: the characters are eaten
            j += width[0];
            i = j + 1;
        }
        return out.append(s, Math.min(i, s.length()), s.length()).toString();
    }

    /** Go's {@code getShellName}: the name after a {@code $} and how many characters it takes ({@code width[0]}). */
    private static String shellName(String s, int[] width) {
        char c = s.charAt(0);
        if (c == '{') {
            if (s.length() > 2 && isSpecial(s.charAt(1)) && s.charAt(2) == '}') {
                width[0] = 3;
                return s.substring(1, 2);
            }
            for (int i = 1; i < s.length(); i++) {
                if (s.charAt(i) == '}') {
                    width[0] = i == 1 ? 2 : i + 1;
                    return i == 1 ? "" : s.substring(1, i);
                }
            }
            width[0] = 1;
            return "";
        }
        if (isSpecial(c)) {
            width[0] = 1;
            return s.substring(0, 1);
        }
        int i = 0;
        while (i < s.length() && isAlphaNum(s.charAt(i))) {
            i++;
        }
        width[0] = i;
        return s.substring(0, i);
    }

    private static boolean isSpecial(char c) {
        return "*#$@!?-".indexOf(c) >= 0 || (c >= '0' && c <= '9');
    }

    private static boolean isAlphaNum(char c) {
        return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }
}
