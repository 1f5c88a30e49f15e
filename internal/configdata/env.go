package configdata

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// envKey is a valid AppConfig/Env key: a POSIX shell name, also allowing . and - (as dotenv files for
// Spring, Docker Compose and friends do).
var envKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// parseEnv reads dotenv data with a small strict line scanner. godotenv cannot be made strict: it
// folds a line without "=" into the next statement or stores it under an empty key, takes "KEY: value"
// and keys holding spaces, and expands $VAR with no way to turn that off. The rules:
//
//   - every line is blank, a comment (its first non-blank character is #), or an assignment KEY=value
//     (blanks around = allowed); anything else is refused, naming its line;
//   - a key is letters, digits, _, . and -, not starting with a digit, and is never empty;
//   - "export KEY=value" is KEY=value; "export" alone, or "export KEY", assigns nothing and is refused;
//   - an unquoted value runs to the end of the line, less a comment (# after a blank) and surrounding
//     blanks;
//   - a single-quoted value is kept as written up to its closing quote (\' does not close it); a
//     double-quoted one turns \n and \r into line breaks and drops the backslash before any other
//     character but $ (\" is ", \\ is \). Both may span lines; only blanks or a comment may follow the
//     closing quote, and a quote never closed is refused naming the line it opened on;
//   - $VAR and ${VAR} are kept as written, as Properties keep ${...}: references are the reader's to
//     expand, so the projection holds what was written;
//   - a key assigned twice keeps its last value, as a shell would.
func parseEnv(data []byte) ([]Resource, error) {
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	doc := map[string]any{}
	for i := 0; i < len(lines); i++ {
		stmt := strings.TrimLeft(lines[i], " \t")
		if stmt == "" || stmt[0] == '#' {
			continue
		}
		key, rest, msg := envAssignment(stmt)
		if msg != "" {
			return nil, &ParseError{Line: i + 1, Msg: msg}
		}
		value, last, err := envValue(key, rest, lines, i)
		if err != nil {
			return nil, err
		}
		doc[key] = value
		i = last
	}
	return []Resource{{Value: doc}}, nil
}

// envAssignment splits a statement (a line without its indentation) into its key and the text after
// "=", or says why it is not an assignment.
func envAssignment(stmt string) (key, rest, msg string) {
	exported := false
	if after, ok := strings.CutPrefix(stmt, "export"); ok && (after == "" || after[0] == ' ' || after[0] == '\t') {
		// "export = 1" assigns the key export; otherwise the prefix is dropped.
		if s := strings.TrimLeft(after, " \t"); s == "" || s[0] != '=' {
			stmt, exported = s, true
		}
	}
	eq := strings.IndexByte(stmt, '=')
	if eq < 0 || (exported && stmt[0] == '#') {
		if exported {
			return "", "", "export must be followed by an assignment: export KEY=value"
		}
		return "", "", "not an assignment: a line is KEY=value, a # comment, or blank"
	}
	key = strings.TrimRight(stmt[:eq], " \t")
	if key == "" {
		return "", "", "the key before = is empty"
	}
	if !envKey.MatchString(key) {
		return "", "", fmt.Sprintf("%q is not a valid key (letters, digits, _, . and -, not starting with a digit)", truncate(key, 64))
	}
	return key, stmt[eq+1:], ""
}

// envValue reads the value of key, whose text after "=" is rest on lines[at]. A quoted value may go on
// over the following lines; last is the line it ends on.
func envValue(key, rest string, lines []string, at int) (value string, last int, err error) {
	v := strings.TrimLeft(rest, " \t")
	if v == "" {
		return "", at, nil
	}
	quote := v[0]
	if quote != '"' && quote != '\'' {
		for i := 1; i < len(v); i++ {
			if v[i] == '#' && (v[i-1] == ' ' || v[i-1] == '\t') {
				v = v[:i]
				break
			}
		}
		return strings.TrimRight(v, " \t"), at, nil
	}
	kind := "double-quoted"
	if quote == '\'' {
		kind = "single-quoted"
	}
	var b strings.Builder
	text := v[1:]
	escaped := false // a backslash of a double-quoted value waits for its character
	for last = at; ; last++ {
		if last > at {
			// The line break is part of the value (after a backslash too: the backslash is dropped).
			text = lines[last]
			b.WriteByte('\n')
			escaped = false
		}
		for j := 0; j < len(text); j++ {
			c := text[j]
			switch {
			case escaped:
				switch c {
				case 'n':
					b.WriteByte('\n')
				case 'r':
					b.WriteByte('\r')
				case '$':
					b.WriteString(`\$`)
				default:
					b.WriteByte(c)
				}
				escaped = false
			case c == '\\' && quote == '"':
				escaped = true
			case c == quote && !(quote == '\'' && j > 0 && text[j-1] == '\\'):
				if after := strings.TrimLeft(text[j+1:], " \t"); after != "" && after[0] != '#' {
					return "", last, &ParseError{Line: last + 1, Msg: fmt.Sprintf("unexpected text after the closing quote of %s's value", key)}
				}
				return b.String(), last, nil
			default:
				b.WriteByte(c)
			}
		}
		if last+1 >= len(lines) {
			return "", last, &ParseError{Line: at + 1, Msg: fmt.Sprintf("the %s value of %s is never closed", kind, key)}
		}
	}
}

// truncate shortens s to at most n bytes (on a rune boundary) for quoting in a message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
