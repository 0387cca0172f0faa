import VTCore

/// One control a camera offers (brightness, exposure, power line frequency…), as the driver
/// describes it, with the value it holds now.
public struct CameraControl: Sendable, Equatable {
    /// What kind of value the control takes (the driver's `V4L2_CTRL_TYPE_*`).
    public enum Kind: String, Sendable, Equatable {
        case integer, boolean, menu, button, bitmask, string
        case integerMenu = "integer_menu"
        case integer64
        /// A compound or otherwise unknown type: listed, never set.
        case other
    }

    /// One entry of a menu control. Drivers may leave gaps: only the indices they offer.
    public struct MenuItem: Sendable, Equatable {
        public var index: Int64
        /// The driver's name for it; for an integer menu, its value in decimal.
        public var name: String

        public init(index: Int64, name: String) {
            self.index = index
            self.name = name
        }
    }

    public var id: UInt32
    /// The name as the driver gives it ("White Balance Temperature, Auto").
    public var label: String
    /// The name to type (`white_balance_temperature_auto`); see `normalizedName(_:)`.
    public var name: String
    /// The heading the driver files it under ("User Controls", "Camera Controls"), if any.
    public var group: String?
    public var kind: Kind
    public var minimum: Int64
    public var maximum: Int64
    public var step: UInt64
    public var defaultValue: Int64
    /// Nil when the control has no readable value (buttons, write-only controls, strings).
    public var value: Int64?
    public var flags: Flags
    public var menu: [MenuItem]

    public init(id: UInt32, label: String, group: String? = nil, kind: Kind, minimum: Int64, maximum: Int64,
                step: UInt64, defaultValue: Int64, value: Int64?, flags: Flags = [], menu: [MenuItem] = []) {
        self.id = id
        self.label = label
        self.name = Self.normalizedName(label)
        self.group = group
        self.kind = kind
        self.minimum = minimum
        self.maximum = maximum
        self.step = step
        self.defaultValue = defaultValue
        self.value = value
        self.flags = flags
        self.menu = menu
    }

    /// The driver's `V4L2_CTRL_FLAG_*` bits that matter to someone setting a control.
    public struct Flags: OptionSet, Sendable, Equatable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        public static let disabled = Flags(rawValue: 0x0001)
        /// Another handle holds it (while streaming, for instance).
        public static let grabbed = Flags(rawValue: 0x0002)
        public static let readOnly = Flags(rawValue: 0x0004)
        /// Changing it changes other controls.
        public static let update = Flags(rawValue: 0x0008)
        /// Another control decides for it now (exposure time under auto exposure).
        public static let inactive = Flags(rawValue: 0x0010)
        public static let slider = Flags(rawValue: 0x0020)
        public static let writeOnly = Flags(rawValue: 0x0040)
        /// The device changes it by itself.
        public static let volatile = Flags(rawValue: 0x0080)

        /// Names as `v4l2-ctl` prints them, in bit order.
        public var names: [String] {
            let all: [(Flags, String)] = [
                (.disabled, "disabled"), (.grabbed, "grabbed"), (.readOnly, "read-only"), (.update, "update"),
                (.inactive, "inactive"), (.slider, "slider"), (.writeOnly, "write-only"), (.volatile, "volatile"),
            ]
            return all.filter { contains($0.0) }.map(\.1)
        }
    }

    /// The menu item with `index`, if the driver offers it.
    public func menuItem(_ index: Int64) -> MenuItem? {
        menu.first { $0.index == index }
    }

    // MARK: Names

    /// A driver's control name as scripts type it, the way `v4l2-ctl` spells it: lower case,
    /// each run of characters other than ASCII letters and digits turned into one underscore,
    /// none at either end. "White Balance Temperature, Auto" → `white_balance_temperature_auto`.
    public static func normalizedName(_ label: String) -> String {
        var name = ""
        var pendingSeparator = false
        for byte in label.utf8 {
            let isLetterOrDigit = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            guard isLetterOrDigit else {
                pendingSeparator = !name.isEmpty
                continue
            }
            if pendingSeparator { name.append("_") }
            pendingSeparator = false
            name.append(Character(Unicode.Scalar(byte)).lowercased())
        }
        return name
    }

    /// A name with every separator dropped, so that "50hz", "50_hz" and "50 Hz" are one name.
    static func compactName(_ text: String) -> String {
        normalizedName(text).filter { $0 != "_" }
    }

    /// `known` ordered by how close each is to `name` (edit distance, then their own order), so
    /// a typing mistake finds its control first.
    public static func nearest(to name: String, in known: [String]) -> [String] {
        NearestNames.ordered(normalizedName(name), in: known)
    }
}

/// One `--control name=value` as typed: resolved against the camera's controls only once the
/// device is open.
public struct ControlSetting: Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// `name=value`; nil when either side is empty.
    public init?(parsing text: String) {
        guard let equals = text.firstIndex(of: "=") else { return nil }
        let name = text[..<equals].trimmingSpaces()
        let value = text[text.index(after: equals)...].trimmingSpaces()
        guard !name.isEmpty, !value.isEmpty else { return nil }
        self.init(name: name, value: value)
    }

    public var description: String { "\(name)=\(value)" }
}

extension StringProtocol {
    /// Without the spaces at either end (V4L2 pads fourccs with them; users type them).
    func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}

// MARK: Values

extension CameraControl {
    /// The number to hand the driver for `text`: an integer (decimal, or hexadecimal after
    /// `0x`) within the range; 0, 1, true or false for a boolean; a menu item by index or by
    /// name, where case, spaces and punctuation do not count ("50hz" is "50 Hz").
    public func value(for text: String) throws(ControlError.Problem) -> Int64 {
        if flags.contains(.readOnly) { throw .readOnly }
        switch kind {
        case .string, .other:
            throw .cannotSet
        case .button:
            // Setting a button presses it; drivers ignore the value.
            return 0
        case .boolean:
            switch text.lowercased() {
            case "1", "true": return 1
            case "0", "false": return 0
            default: throw .notAValue
            }
        case .integer, .integer64:
            guard let number = Self.integer(text) else { throw .notAValue }
            guard (minimum...maximum).contains(number) else { throw .outOfRange }
            return number
        case .bitmask:
            guard let number = Self.integer(text) else { throw .notAValue }
            guard number >= 0, number & ~maximum == 0 else { throw .outOfRange }
            return number
        case .menu:
            if let index = Self.integer(text) {
                guard (minimum...maximum).contains(index) else { throw .outOfRange }
                guard menuItem(index) != nil else { throw .noSuchMenuItem }
                return index
            }
            let typed = Self.compactName(text)
            guard !typed.isEmpty, let item = menu.first(where: { Self.compactName($0.name) == typed }) else {
                throw .noSuchMenuItem
            }
            return item.index
        case .integerMenu:
            // Items are numbers themselves: an offered index first, then an item's value.
            if let index = Self.integer(text), menuItem(index) != nil { return index }
            guard let number = Self.integer(text), let item = menu.first(where: { Self.integer($0.name) == number }) else {
                throw .noSuchMenuItem
            }
            return item.index
        }
    }

    /// What the control accepts, for messages: "an integer from -64 to 64", "0 (Disabled),
    /// 1 (50 Hz), 2 (60 Hz)".
    public var accepted: String {
        switch kind {
        case .integer, .integer64:
            return "an integer from \(minimum) to \(maximum)" + (step > 1 ? " in steps of \(step)" : "")
        case .bitmask:
            return "a bit mask within 0x\(String(maximum, radix: 16))"
        case .boolean:
            return "0, 1, true or false"
        case .menu, .integerMenu:
            return "one of " + menuText
        case .button:
            return "any value (setting it presses it)"
        case .string, .other:
            return "no value vtrecord can set"
        }
    }

    /// The menu as "0 (Disabled), 1 (50 Hz), 2 (60 Hz)".
    public var menuText: String {
        menu.map { "\($0.index) (\($0.name))" }.joined(separator: ", ")
    }

    /// Decimal with an optional sign, or hexadecimal after `0x`.
    static func integer(_ text: String) -> Int64? {
        let lower = text.lowercased()
        if lower.hasPrefix("0x") { return Int64(lower.dropFirst(2), radix: 16) }
        if lower.hasPrefix("-0x") { return Int64(lower.dropFirst(3), radix: 16).map { -$0 } }
        return Int64(lower)
    }
}
