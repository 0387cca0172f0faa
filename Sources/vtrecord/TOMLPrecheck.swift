/// The checks TOML text must pass before TOMLKit reads it, for what TOMLKit 0.6.0 cannot take:
///
/// - A table header whose `[` (or `[[`) is followed by anything but a key, such as `[=]`,
///   `[.a]` or `[` alone on a line. The toml++ parser inside TOMLKit asserts instead of
///   reporting an error there, and the assertion aborts vtrecord (found by fuzzing presets; a
///   four-byte file was enough).
/// - A NUL byte. TOMLKit hands the text to toml++ as a C string, which would end at the NUL and
///   silently drop the rest of the file; TOML allows no control character but tab anyway.
///
/// Only as much of TOML is followed as it takes to tell a header from a value: strings (which
/// may hold brackets, and span lines), comments, and brackets and braces inside values. What
/// else is wrong with the text is left to toml++, which reports it properly; it stops at its
/// first error, so the scan need only be right up to there.
enum TOMLPrecheck {
    struct Problem: Equatable {
        let line: Int
        let column: Int
        let message: String
    }

    static func problem(in text: String) -> Problem? {
        var scanner = Scanner(Array(text.unicodeScalars))
        return scanner.run()
    }

    private struct Scanner {
        let scalars: [Unicode.Scalar]
        var index = 0
        var line = 1
        var column = 1
        /// Open brackets and braces inside the value being read.
        var depth = 0
        /// After the `=` of a key/value pair, until the line ends outside any bracket.
        var inValue = false
        /// Nothing but blanks so far on this line, outside any value: a `[` opens a header.
        var atStatementStart = true

        init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

        var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

        mutating func advance() {
            if scalars[index] == "\n" {
                line += 1
                column = 1
            } else {
                column += 1
            }
            index += 1
        }

        mutating func run() -> Problem? {
            while let c = current {
                if c == "\0" { return Problem(line: line, column: column, message: "a NUL byte, which TOML does not allow") }
                switch c {
                case "#":
                    while let next = current, next != "\n" {
                        if next == "\0" { return Problem(line: line, column: column, message: "a NUL byte, which TOML does not allow") }
                        advance()
                    }
                    continue
                case "\"", "'":
                    if let problem = skipString(quote: c) { return problem }
                    atStatementStart = false
                    continue
                case "\n":
                    if depth == 0 {
                        inValue = false
                        atStatementStart = true
                    }
                case " ", "\t", "\r":
                    break
                case "[" where atStatementStart && !inValue && depth == 0:
                    if let problem = checkHeader() { return problem }
                    atStatementStart = false
                    continue
                default:
                    atStatementStart = false
                    if inValue {
                        if c == "[" || c == "{" { depth += 1 }
                        if (c == "]" || c == "}") && depth > 0 { depth -= 1 }
                    } else if c == "=" {
                        inValue = true
                    }
                }
                advance()
            }
            return nil
        }

        /// At the `[` of a header: what follows it (and a second `[`, and blanks) must start a
        /// key, close the header or end the text; toml++ reports the rest of a header's errors.
        mutating func checkHeader() -> Problem? {
            advance()
            skipBlanks()
            if current == "[" {
                advance()
                skipBlanks()
            }
            guard let c = current, !Self.startsKey(c) else { return nil }
            let shown = c == "\n" || c == "\r" ? "the end of the line" : "'\(c)'"
            return Problem(line: line, column: column, message: "a table header needs a key after '[', not \(shown)")
        }

        mutating func skipBlanks() {
            while current == " " || current == "\t" { advance() }
        }

        /// A bare key's characters, a quote, or a `]` (an empty key, which toml++ reports).
        static func startsKey(_ c: Unicode.Scalar) -> Bool {
            ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c)
                || c == "_" || c == "-" || c == "\"" || c == "'" || c == "]"
        }

        /// Skips a basic or literal string, one-line or multi-line (three quotes), from its
        /// opening quote. An unterminated one-line string ends at the line's end, where toml++
        /// stops with its own error.
        mutating func skipString(quote: Unicode.Scalar) -> Problem? {
            let multiline = index + 2 < scalars.count && scalars[index + 1] == quote && scalars[index + 2] == quote
            for _ in 0..<(multiline ? 3 : 1) { advance() }
            while let c = current {
                if c == "\0" { return Problem(line: line, column: column, message: "a NUL byte, which TOML does not allow") }
                if c == "\n" && !multiline { return nil }
                if c == "\\" && quote == "\"" {
                    advance()
                    if current != nil { advance() }
                    continue
                }
                if c == quote {
                    guard multiline else {
                        advance()
                        return nil
                    }
                    var run = 0
                    while current == quote {
                        run += 1
                        advance()
                    }
                    // Up to two quotes may stand just inside the closing three.
                    if run >= 3 { return nil }
                    continue
                }
                advance()
            }
            return nil
        }
    }
}
