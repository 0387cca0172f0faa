import Foundation
import TOMLKit
import VTCore

/// A named set of recording options read from a TOML file: each key is the long name of a
/// recording option (`size = "1920x1080"`, `fps = 30`, `control = ["brightness=20"]`), plus a
/// `description` for people.
struct Preset: Sendable {
    /// One key of the file, as the command line would spell its value.
    struct Entry: Sendable, Equatable {
        enum Value: Sendable, Equatable {
            case text(String)
            case flag(Bool)
            case list([String])
        }

        let key: String
        let value: Value
        /// Line of the key in the file (1-based).
        let line: Int
    }

    let name: String
    let origin: PresetOrigin
    let description: String?
    let entries: [Entry]

    /// Reads and checks a preset: TOML syntax, known keys, value types, and every value as the
    /// command line would parse it. Throws the first problem, naming file, line and key.
    init(name: String, origin: PresetOrigin, text: String,
         catalog: RecordingOptionCatalog = .shared) throws(PresetError) {
        let table = try Self.parseTOML(text, origin: origin)
        let lines = KeyLines(text: text)
        try self.init(name: name, origin: origin, table: table, line: { lines.line(of: $0) }, catalog: catalog)
    }

    /// A preset from a table of a larger file (a batch job). Keys in `reserved` are the
    /// caller's to read and are skipped here.
    init(name: String, origin: PresetOrigin, table: TOMLTable, line: (String) -> Int,
         reserved: Set<String> = [], catalog: RecordingOptionCatalog = .shared) throws(PresetError) {
        self.name = name
        self.origin = origin
        var description: String?
        var entries: [Entry] = []
        // TOML tables do not keep their order; the command's own order reads best.
        let keys = table.keys.filter { !reserved.contains($0) }
            .sorted { (catalog.keys.firstIndex(of: $0) ?? .max, $0) < (catalog.keys.firstIndex(of: $1) ?? .max, $1) }
        for key in keys {
            guard let value = table[key] else { continue }
            let line = line(key)
            let fail = { (problem: String) in PresetError(origin: origin, line: line, key: key, problem: problem) }
            if key == "description" {
                guard let text = value.string else { throw fail("takes a string, not \(Self.typeName(value.type))") }
                description = text
                continue
            }
            guard let option = catalog.option(key) else {
                throw fail(Self.unknownKeyProblem(key, catalog: catalog, also: reserved))
            }
            let entry = Entry(key: key, value: try Self.convert(value, for: option, fail: fail), line: line)
            if let problem = PresetValueCheck.problem(with: entry) { throw fail(problem) }
            entries.append(entry)
        }
        self.description = description
        self.entries = entries
    }

    static func parseTOML(_ text: String, origin: PresetOrigin) throws(PresetError) -> TOMLTable {
        if let problem = TOMLPrecheck.problem(in: text) {
            throw PresetError(origin: origin, line: problem.line, key: nil,
                              problem: "not valid TOML: \(problem.message) (column \(problem.column))")
        }
        do {
            return try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw PresetError(origin: origin, line: error.source.begin.line, key: nil,
                              problem: "not valid TOML: \(error.description) (column \(error.source.begin.column))")
        } catch {
            throw PresetError(origin: origin, line: nil, key: nil, problem: "not valid TOML: \(error)")
        }
    }

    /// The value in the form the option takes on the command line; a TOML type that cannot be
    /// that (a string for a flag, a table for anything) is refused.
    private static func convert(_ value: any TOMLValueConvertible, for option: RecordingOptionCatalog.Option,
                                fail: (String) -> PresetError) throws(PresetError) -> Entry.Value {
        switch option.kind {
        case .flag, .invertibleFlag:
            guard value.type == .bool, let flag = value.bool else {
                throw fail("takes true or false, not \(typeName(value.type))")
            }
            return .flag(flag)
        case .option:
            if value.type == .bool, let flag = value.bool, RecordingOptionCatalog.formerFlags.contains(option.name) {
                return .text(flag ? "true" : "false")
            }
            guard let text = scalarText(value) else {
                throw fail("takes a string or a number, not \(typeName(value.type))")
            }
            return .text(text)
        case .repeating:
            if RecordingOptionCatalog.formerScalars.contains(option.name), let text = scalarText(value) {
                return .list([text])
            }
            guard let array = value.array else {
                throw fail("takes an array of strings, such as [\"\(option.valueName ?? "value")\"], not \(typeName(value.type))")
            }
            var items: [String] = []
            for item in array {
                guard let text = scalarText(item) else {
                    throw fail("takes an array of strings, not one holding \(typeName(item.type))")
                }
                items.append(text)
            }
            return .list(items)
        }
    }

    /// Strings as they are, numbers as the command line would spell them.
    private static func scalarText(_ value: any TOMLValueConvertible) -> String? {
        switch value.type {
        case .string: return value.string
        case .int: return value.int.map(String.init)
        case .double:
            guard let number = value.double else { return nil }
            return number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        default: return nil
        }
    }

    static func typeName(_ type: TOMLType) -> String {
        switch type {
        case .string: "a string"
        case .int: "an integer"
        case .double: "a number"
        case .bool: "a boolean"
        case .array: "an array"
        case .table: "a table"
        case .date, .time, .dateTime: "a date or time"
        }
    }

    static func unknownKeyProblem(_ key: String, catalog: RecordingOptionCatalog, also: Set<String> = []) -> String {
        let known = catalog.keys + ["description"] + also.sorted()
        var problem = "unknown key"
        if key.hasPrefix("no-"), let option = catalog.option(String(key.dropFirst(3))) {
            switch option.kind {
            case .invertibleFlag: return problem + ": write \(option.name) = false"
            // --no-realtime stands for --realtime off.
            case .option where RecordingOptionCatalog.formerFlags.contains(option.name):
                return problem + ": write \(option.name) = \"off\""
            case .option, .flag, .repeating: break
            }
        }
        if let nearest = NearestNames.suggestion(for: key, in: known) {
            problem += ": did you mean '\(nearest)'?"
        } else {
            problem += "."
        }
        let extra = also.sorted().map { "'\($0)'" }
        return problem + " Keys are the recording options' long names (vtrecord record --help), "
            + (["'description'"] + extra).joined(separator: ", ") + "."
    }
}

/// Where a preset was read from.
enum PresetOrigin: Sendable, Equatable, CustomStringConvertible {
    /// Compiled into the binary.
    case builtIn(String)
    case file(String)

    var description: String {
        switch self {
        case .builtIn(let name): "built-in preset \(name)"
        case .file(let path): path
        }
    }
}

/// A problem in a preset: exit 2, naming the file, the line and the key.
struct PresetError: ReportableError, Equatable {
    let origin: PresetOrigin
    let line: Int?
    let key: String?
    let problem: String

    var exitStatus: ExitStatus { .usage }

    var description: String {
        var location = origin.description
        if let line, line > 0 { location += ":\(line)" }
        if let key { location += ": \(key)" }
        return "\(location): \(problem)"
    }
}

/// Finds the line where each key is set. TOML parsers report positions only for syntax
/// errors, so a problem with a key's value is located by reading the text again. Keys are
/// found per section: "" for the top level, "name" under `[name]`, and "name#N" in the Nth
/// `[[name]]` (from 1).
struct KeyLines {
    private var lines: [String: Int] = [:]
    private var headers: [String: Int] = [:]

    init(text: String) {
        var section = ""
        var counts: [String: Int] = [:]
        // The delimiter of a multi-line string being read: its lines hold no keys.
        var openString: String?
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if let delimiter = openString {
                if line.components(separatedBy: delimiter).count % 2 == 0 { openString = nil }
                continue
            }
            if line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                let isArray = line.hasPrefix("[[")
                let path = Self.keyPath(line.drop { $0 == "[" || $0 == " " })
                let name = path.joined(separator: ".")
                // A [table] header also sets a key of the enclosing level.
                let top = path.first ?? ""
                if lines["\u{0}" + top] == nil { lines["\u{0}" + top] = index + 1 }
                if isArray {
                    counts[name, default: 0] += 1
                    section = "\(name)#\(counts[name] ?? 1)"
                } else {
                    section = name
                }
                headers[section] = index + 1
                continue
            }
            guard line.contains("="), let key = Self.keyPath(Substring(line)).first, !key.isEmpty else { continue }
            if lines[section + "\u{0}" + key] == nil { lines[section + "\u{0}" + key] = index + 1 }
            for delimiter in ["\"\"\"", "'''"] where line.components(separatedBy: delimiter).count % 2 == 0 {
                openString = delimiter
            }
        }
    }

    /// The dotted key at the start of `text` (`a.b = 1`, `"a.b" = 1`, `[a.b]`), its parts unquoted.
    private static func keyPath(_ text: Substring) -> [String] {
        var parts: [String] = []
        var rest = text.drop { $0 == " " || $0 == "\t" }
        while let first = rest.first {
            if first == "\"" || first == "'" {
                let body = rest.dropFirst()
                guard let close = body.firstIndex(of: first) else { return parts }
                parts.append(String(body[..<close]))
                rest = body[body.index(after: close)...]
            } else {
                let bare = rest.prefix { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
                guard !bare.isEmpty else { return parts }
                parts.append(String(bare))
                rest = rest.dropFirst(bare.count)
            }
            rest = rest.drop { $0 == " " || $0 == "\t" }
            guard rest.first == "." else { return parts }
            rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" }
        }
        return parts
    }

    /// The line of `key` in `section` (0 when not found).
    func line(of key: String, in section: String = "") -> Int { lines[section + "\u{0}" + key] ?? 0 }

    /// The line of a section's header (0 when not found).
    func header(_ section: String) -> Int { headers[section] ?? 0 }
}
