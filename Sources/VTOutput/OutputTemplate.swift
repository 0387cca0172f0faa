import Foundation
import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// `-o` as a template for file names: strftime conversions (`%Y%m%d-%H%M%S`, `%%` for a
/// percent sign) and the fields `{device}`, `{preset}` and `{n}` (the segment number, `{n:03}`
/// zero-padded to 3 digits). Parsed once, so a bad template is refused before anything is
/// opened; expanded once for each file, at the moment it starts.
public struct OutputTemplate: Sendable, Equatable, CustomStringConvertible {
    /// What a file name is made of.
    public struct Context: Sendable {
        /// When the file starts.
        public var date: Date
        /// nil: the local time of the process (TZ, /etc/localtime), as date(1) shows it; a zone
        /// makes the name independent of the machine (zone abbreviations for `%Z` are then
        /// Foundation's, such as GMT+9, not the C library's JST).
        public var timeZone: TimeZone?
        /// `{device}`: the camera's node name (`video0`), the input file's name without its
        /// extension, `stdin`, or `test-pattern`.
        public var device: String
        /// `{preset}`: nil when none was chosen, which expands to `default`.
        public var preset: String?
        /// `{n}`: 0 for the first file.
        public var segment: Int
        /// `{label}`, in an event clip's template: what the event was called.
        public var label: String

        public init(date: Date, timeZone: TimeZone? = nil, device: String, preset: String? = nil,
                    segment: Int = 0, label: String = "event") {
            self.date = date
            self.timeZone = timeZone
            self.device = device
            self.preset = preset
            self.segment = segment
            self.label = label
        }
    }

    enum Piece: Sendable, Equatable {
        case literal(String)
        /// One strftime conversion with its flags and width, such as `%Y` or `%-d`.
        case time(String)
        case device
        case preset
        /// `{n}`, padded with zeros to `width` digits.
        case segment(width: Int)
        case label
    }

    /// The template as given.
    public let text: String
    let pieces: [Piece]

    /// The conversions glibc's strftime documents, less `%n` and `%t` (a newline or a tab in a
    /// file name only causes trouble).
    static let conversions = Set("aAbBcCdDeFgGhHIjklmMpPrRsSTuUVwWxXyYzZ")
    /// Flags glibc's strftime takes between `%` and the conversion.
    static let flags = Set("_-0^#")
    static let maxWidth = 64

    /// `option` names the template in errors; `labels`: `{label}` is a field (event clips).
    public init(_ text: String, option: String = "-o", labels: Bool = false) throws(OutputTemplateError) {
        do throws(OutputTemplateError) {
            try self.init(parsing: text, labels: labels)
        } catch {
            throw option == "-o" ? error : .inOption(option, error)
        }
    }

    private init(parsing text: String, labels: Bool) throws(OutputTemplateError) {
        self.text = text
        var pieces: [Piece] = []
        var literal = ""
        var rest = Substring(text)
        func flushLiteral() {
            if !literal.isEmpty { pieces.append(.literal(literal)) }
            literal = ""
        }
        while let c = rest.first {
            rest.removeFirst()
            switch c {
            case "%":
                if rest.first == "%" {
                    rest.removeFirst()
                    literal.append("%")
                    continue
                }
                flushLiteral()
                pieces.append(.time(try Self.conversion(&rest, template: text)))
            case "{":
                guard let close = rest.firstIndex(of: "}") else { throw .unclosedField(template: text) }
                let field = rest[..<close]
                rest = rest[rest.index(after: close)...]
                flushLiteral()
                pieces.append(try Self.field(field, template: text, labels: labels))
            default:
                literal.append(c)
            }
        }
        flushLiteral()
        self.pieces = pieces
    }

    /// Reads `[flags][width][E|O]letter` after a `%`.
    private static func conversion(_ rest: inout Substring, template: String) throws(OutputTemplateError) -> String {
        var spec = "%"
        while let c = rest.first, flags.contains(c) {
            spec.append(c)
            rest.removeFirst()
        }
        var width = ""
        while let c = rest.first, c.isASCII, c.isNumber {
            width.append(c)
            rest.removeFirst()
        }
        spec += width
        if let c = rest.first, c == "E" || c == "O" {
            spec.append(c)
            rest.removeFirst()
        }
        guard let letter = rest.first else { throw .unknownConversion(spec, template: template) }
        rest.removeFirst()
        spec.append(letter)
        guard conversions.contains(letter) else { throw .unknownConversion(spec, template: template) }
        // Keeps one conversion within expand's buffer.
        guard (Int(width) ?? 0) <= maxWidth else { throw .conversionTooWide(spec, maximum: maxWidth, template: template) }
        return spec
    }

    private static func field(_ field: Substring, template: String, labels: Bool) throws(OutputTemplateError) -> Piece {
        let parts = field.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let name = String(parts[0])
        let format = parts.count > 1 ? String(parts[1]) : nil
        switch (name, format) {
        case ("device", nil): return .device
        case ("preset", nil): return .preset
        case ("label", nil) where labels: return .label
        case ("n", nil): return .segment(width: 0)
        case ("n", let format?):
            guard format.count >= 2, format.first == "0", format.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let width = Int(format.dropFirst()), (1...20).contains(width) else {
                throw .badFieldFormat(field: String(field), template: template)
            }
            return .segment(width: width)
        case ("device", _?), ("preset", _?):
            throw .badFieldFormat(field: String(field), template: template)
        default:
            throw .unknownField(name: String(field), template: template)
        }
    }

    /// `-` names standard output, not a file.
    public var isStandardOutput: Bool { text == "-" }

    /// Whether every file gets a name of its own: `{n}` differs from one segment to the next.
    public var numbersSegments: Bool {
        pieces.contains { if case .segment = $0 { true } else { false } }
    }

    /// The file name for `context`.
    public func expand(_ context: Context) -> String {
        if isStandardOutput { return text }
        var time: (fields: tm, zone: String?)?
        var name = ""
        for piece in pieces {
            switch piece {
            case .literal(let text):
                name += text
            case .time(let spec):
                if spec.last == "s" {
                    // strftime's %s reads the fields back as local time, which is wrong for a
                    // given zone; the count of seconds needs no zone at all.
                    name += String(Int64(context.date.timeIntervalSince1970.rounded(.down)))
                    continue
                }
                if time == nil { time = Self.brokenDown(context.date, in: context.timeZone) }
                name += Self.format(spec, time!.fields, zone: time!.zone)
            case .device:
                name += context.device
            case .preset:
                name += context.preset ?? "default"
            case .label:
                name += context.label
            case .segment(let width):
                let digits = String(context.segment)
                name += String(repeating: "0", count: max(0, width - digits.count)) + digits
            }
        }
        return name
    }

    public var description: String { text }

    /// The calendar fields of `date` in `zone` (nil: local time), as strftime reads them, and
    /// the zone's abbreviation when it is not the C library's own.
    static func brokenDown(_ date: Date, in zone: TimeZone?) -> (fields: tm, zone: String?) {
        if zone == nil {
            var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
            var fields = tm()
            // localtime_r fails only for a year that does not fit an int.
            if localtime_r(&seconds, &fields) != nil { return (fields, nil) }
        }
        let zone = zone ?? .current
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        let dayOfYear = calendar.ordinality(of: .day, in: .year, for: date) ?? 1
        var t = tm()
        t.tm_year = Int32(c.year! - 1900)
        t.tm_mon = Int32(c.month! - 1)
        t.tm_mday = Int32(c.day!)
        t.tm_hour = Int32(c.hour!)
        t.tm_min = Int32(c.minute!)
        t.tm_sec = Int32(c.second!)
        t.tm_wday = Int32(c.weekday! - 1)
        t.tm_yday = Int32(dayOfYear - 1)
        t.tm_isdst = zone.isDaylightSavingTime(for: date) ? 1 : 0
        t.tm_gmtoff = zone.secondsFromGMT(for: date)
        return (t, zone.abbreviation(for: date) ?? "")
    }

    /// One conversion through strftime, so every field means exactly what `date +FORMAT` and
    /// the strftime(3) manual say. The process never calls setlocale, so names are the C
    /// locale's.
    static func format(_ spec: String, _ time: tm, zone: String?) -> String {
        var time = time
        var buffer = [CChar](repeating: 0, count: 256)
        let count: Int
        if let zone {
            count = zone.withCString { zoneName in
                // %Z reads tm_zone; the pointer is used only within this call.
                time.tm_zone = zoneName
                return strftime(&buffer, buffer.count, spec, &time)
            }
        } else {
            // localtime_r pointed tm_zone at the C library's own abbreviation.
            count = strftime(&buffer, buffer.count, spec, &time)
        }
        // 0 means an empty result: the width cap leaves every conversion room in the buffer.
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// `-o` cannot be read as a template (exit 2).
public enum OutputTemplateError: ReportableError, Equatable {
    case unknownField(name: String, template: String)
    case badFieldFormat(field: String, template: String)
    case unclosedField(template: String)
    case unknownConversion(String, template: String)
    case conversionTooWide(String, maximum: Int, template: String)
    /// One of the above in a template given to another option than `-o`.
    indirect case inOption(String, OutputTemplateError)

    public var exitStatus: ExitStatus { .usage }

    public var description: String { message(option: "-o") }

    /// The message, naming the option the template was given to.
    private func message(option: String) -> String {
        switch self {
        case let .inOption(option, error):
            error.message(option: option)
        case let .unknownField(name, template):
            "\(option) \(template): unknown field {\(name)}: the fields are {device}, {preset}, "
                + (option == "-o" ? "" : "{label}, ") + "{n} and {n:03}"
        case let .badFieldFormat(field, template) where field.hasPrefix("n:"):
            "\(option) \(template): {\(field)} is not a width: write {n:03} for three digits (1 to 20, with a leading 0)"
        case let .badFieldFormat(field, template):
            "\(option) \(template): {\(field)} cannot be formatted that way: only {n} takes a width, as {n:03}"
        case let .conversionTooWide(spec, maximum, template):
            "\(option) \(template): \(spec) is wider than vtrecord allows (at most \(maximum))"
        case let .unclosedField(template):
            "\(option) \(template): a '{' has no closing '}': fields are written {device}, {preset}, {n}"
        case let .unknownConversion(spec, template):
            "\(option) \(template): \(spec) is not a strftime time field (such as %Y%m%d-%H%M%S): write %% for a percent sign"
        }
    }
}

extension OutputTemplate {
    /// `name.mp4` → `name-1.mp4`: the name of a file opened again after a failure.
    public static func suffixed(_ path: String, _ number: Int) -> String {
        let ext = URL(fileURLWithPath: path).pathExtension
        guard !ext.isEmpty else { return "\(path)-\(number)" }
        return String(path.dropLast(ext.count + 1)) + "-\(number)." + ext
    }
}
