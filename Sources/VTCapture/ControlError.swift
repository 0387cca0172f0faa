import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// A `--control name=value` that cannot be applied: bad usage (exit 2), found before any
/// output exists. The message names the setting and says what the camera takes instead.
public struct ControlError: ReportableError, Equatable {
    public enum Problem: Error, Equatable, Sendable {
        /// The camera has no control by that name; `known` lists its controls, nearest first.
        case unknownControl(known: [String])
        /// The value is not of the control's kind (a word for an integer, "maybe" for a boolean).
        case notAValue
        case outOfRange
        /// A menu control without that item (a name it does not offer, an index it skips).
        case noSuchMenuItem
        case readOnly
        /// A kind of control `--control` cannot set (strings, compound controls).
        case cannotSet
        /// The driver refused the value (EINVAL, ERANGE, EACCES…).
        case refused(errno: Int32)
    }

    public var path: String
    public var setting: ControlSetting
    /// The control the setting named; nil when there is none by that name.
    public var control: CameraControl?
    public var problem: Problem

    public init(path: String, setting: ControlSetting, control: CameraControl?, problem: Problem) {
        self.path = path
        self.setting = setting
        self.control = control
        self.problem = problem
    }

    public var exitStatus: ExitStatus { .usage }

    public var description: String {
        let option = "--control \(setting)"
        guard let control else {
            guard case let .unknownControl(known) = problem, let nearest = known.first else {
                return "\(option): \(path) has no controls"
            }
            let typed = CameraControl.normalizedName(setting.name)
            let close = NearestNames.suggestion(for: typed, in: [nearest]) != nil
            return "\(option): \(path) has no control named '\(setting.name)'"
                + (close ? ": did you mean \(nearest)?" : "")
                + " Its controls: \(known.joined(separator: ", "))"
        }
        let name = control.name
        switch problem {
        case .unknownControl:
            return "\(option): \(path) has no control named '\(setting.name)'"
        case .notAValue:
            return "\(option): \(name) takes \(control.accepted)"
        case .outOfRange:
            return "\(option) is out of range: \(name) takes \(control.accepted)"
        case .noSuchMenuItem:
            return "\(option): \(name) has no item '\(setting.value)': it takes \(control.accepted)"
        case .readOnly:
            return "\(option): \(name) is read-only"
        case .cannotSet:
            return "\(option): \(name) is a \(control.kind.rawValue) control, which --control cannot set"
        case let .refused(code):
            var text = "\(option): \(path) refused the value (\(SystemError.reason(code)))"
            if control.flags.contains(.inactive) {
                text += ": \(name) is inactive, another control decides it now"
            } else {
                text += ": \(name) takes \(control.accepted)"
            }
            return text
        }
    }
}
