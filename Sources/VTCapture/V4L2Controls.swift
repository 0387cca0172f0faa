import CV4L2
import Logging
import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// Camera controls: listing them with their ranges, menus and values, and setting the ones
/// the user named.
///
/// Controls are enumerated with VIDIOC_QUERY_EXT_CTRL (64-bit ranges), or VIDIOC_QUERYCTRL on
/// drivers that predate it, and read and written with the extended control calls, falling back
/// to VIDIOC_G_CTRL/VIDIOC_S_CTRL where those are missing.
extension V4L2Device {
    /// Every enabled control, in the driver's order, each under its class heading.
    func controls() throws(CaptureError) -> [CameraControl] {
        var found: [CameraControl] = []
        var group: String?
        var extended = true
        var lastID: UInt32 = 0
        while true {
            let next = lastID | UInt32(V4L2_CTRL_FLAG_NEXT_CTRL)
            let queried: QueriedControl?
            if extended {
                var query = v4l2_query_ext_ctrl()
                query.id = next
                if let code = ioctl(vt_VIDIOC_QUERY_EXT_CTRL, &query) {
                    if code == ENOTTY && lastID == 0 {
                        extended = false
                        continue
                    }
                    guard code == EINVAL else { throw error(for: code, request: vt_VIDIOC_QUERY_EXT_CTRL) }
                    queried = nil
                } else {
                    queried = QueriedControl(query)
                }
            } else {
                var query = v4l2_queryctrl()
                query.id = next
                if let code = ioctl(vt_VIDIOC_QUERYCTRL, &query) {
                    guard code == EINVAL || code == ENOTTY else { throw error(for: code, request: vt_VIDIOC_QUERYCTRL) }
                    queried = nil
                } else {
                    queried = QueriedControl(query)
                }
            }
            // EINVAL: no control after lastID.
            guard let control = queried, control.id > lastID else { break }
            lastID = control.id
            if control.type == V4L2_CTRL_TYPE_CTRL_CLASS.rawValue {
                group = control.name
                continue
            }
            let flags = CameraControl.Flags(rawValue: control.flags)
            if flags.contains(.disabled) { continue }
            let kind = Self.kind(control.type)
            var described = CameraControl(
                id: control.id, label: control.name, group: group, kind: kind,
                minimum: control.minimum, maximum: control.maximum, step: control.step,
                defaultValue: control.defaultValue, value: nil, flags: flags)
            if kind == .menu || kind == .integerMenu {
                described.menu = try menu(of: described)
            }
            if ![.button, .string, .other].contains(kind) && !flags.contains(.writeOnly) {
                described.value = try currentValue(of: described)
            }
            found.append(described)
        }
        return found
    }

    /// Sets each named control, in the order given, after checking every one against what the
    /// camera offers, so a mistake in the last leaves the camera as it was. A value the driver
    /// adjusts (uvcvideo rounds integers to their step) is reported in one line.
    func applyControls(_ settings: [ControlSetting], logger: Logger) throws(CaptureError) {
        guard !settings.isEmpty else { return }
        let available = try controls()
        var resolved: [(setting: ControlSetting, control: CameraControl, value: Int64)] = []
        for setting in settings {
            let typed = CameraControl.normalizedName(setting.name)
            guard let control = available.first(where: { $0.name == typed }) else {
                let known = CameraControl.nearest(to: typed, in: available.map(\.name))
                throw .control(ControlError(path: path, setting: setting, control: nil,
                                            problem: .unknownControl(known: known)))
            }
            do throws(ControlError.Problem) {
                resolved.append((setting, control, try control.value(for: setting.value)))
            } catch {
                throw .control(ControlError(path: path, setting: setting, control: control, problem: error))
            }
        }
        for (setting, control, value) in resolved {
            if let code = setValue(value, of: control) {
                switch code {
                case EINVAL, ERANGE, EACCES, EPERM, EILSEQ:
                    throw .control(ControlError(path: path, setting: setting, control: control,
                                                problem: .refused(errno: code)))
                default:
                    throw error(for: code, request: vt_VIDIOC_S_EXT_CTRLS)
                }
            }
            guard control.kind == .integer || control.kind == .integer64,
                  !control.flags.contains(.writeOnly), !control.flags.contains(.volatile),
                  let taken = try currentValue(of: control), taken != value else { continue }
            logger.notice("\(path): asked for \(control.name)=\(value), the camera took \(taken)")
        }
    }

    // MARK: Values

    /// The control's value now; nil when the driver will not say (write-only, or a camera
    /// that cannot report it).
    private func currentValue(of control: CameraControl) throws(CaptureError) -> Int64? {
        var item = v4l2_ext_control()
        item.id = control.id
        let code = extendedControl(vt_VIDIOC_G_EXT_CTRLS, &item)
        switch code {
        case nil:
            return control.kind == .integer64 ? item.value64 : Int64(item.value)
        case ENOTTY?:
            var legacy = v4l2_control(id: control.id, value: 0)
            if let code = ioctl(vt_VIDIOC_G_CTRL, &legacy) {
                if code == ENODEV { throw .unplugged(path: path) }
                return nil
            }
            return Int64(legacy.value)
        case ENODEV?:
            throw .unplugged(path: path)
        default:
            return nil
        }
    }

    /// G_EXT_CTRLS or S_EXT_CTRLS for one control's current value; nil on success, else errno.
    private func extendedControl(_ request: UInt, _ item: inout v4l2_ext_control) -> Int32? {
        withUnsafeMutablePointer(to: &item) { pointer in
            var controls = v4l2_ext_controls()
            controls.which = UInt32(V4L2_CTRL_WHICH_CUR_VAL)
            controls.count = 1
            controls.controls = pointer
            return ioctl(request, &controls)
        }
    }

    /// Hands one value to the driver; nil on success, else errno.
    private func setValue(_ value: Int64, of control: CameraControl) -> Int32? {
        var item = v4l2_ext_control()
        item.id = control.id
        if control.kind == .integer64 {
            item.value64 = value
        } else {
            item.value = Int32(truncatingIfNeeded: value)
        }
        let code = extendedControl(vt_VIDIOC_S_EXT_CTRLS, &item)
        guard code == ENOTTY, control.kind != .integer64 else { return code }
        var legacy = v4l2_control(id: control.id, value: Int32(truncatingIfNeeded: value))
        return ioctl(vt_VIDIOC_S_CTRL, &legacy)
    }

    /// The items a menu control offers; the driver refuses the indices it skips.
    private func menu(of control: CameraControl) throws(CaptureError) -> [CameraControl.MenuItem] {
        // A menu is a handful of items; a range this wide is a driver bug, not a menu.
        guard control.minimum >= 0, control.maximum >= control.minimum,
              control.maximum - control.minimum < 1024 else { return [] }
        var items: [CameraControl.MenuItem] = []
        for index in control.minimum...control.maximum {
            var query = v4l2_querymenu()
            query.id = control.id
            query.index = UInt32(index)
            if let code = ioctl(vt_VIDIOC_QUERYMENU, &query) {
                if code == ENODEV { throw .unplugged(path: path) }
                continue
            }
            let name = control.kind == .integerMenu ? "\(query.value)" : Self.string(query.name)
            items.append(CameraControl.MenuItem(index: index, name: name))
        }
        return items
    }

    private static func kind(_ type: UInt32) -> CameraControl.Kind {
        switch type {
        case V4L2_CTRL_TYPE_INTEGER.rawValue: .integer
        case V4L2_CTRL_TYPE_BOOLEAN.rawValue: .boolean
        case V4L2_CTRL_TYPE_MENU.rawValue: .menu
        case V4L2_CTRL_TYPE_INTEGER_MENU.rawValue: .integerMenu
        case V4L2_CTRL_TYPE_BUTTON.rawValue: .button
        case V4L2_CTRL_TYPE_INTEGER64.rawValue: .integer64
        case V4L2_CTRL_TYPE_BITMASK.rawValue: .bitmask
        case V4L2_CTRL_TYPE_STRING.rawValue: .string
        default: .other
        }
    }
}

/// What VIDIOC_QUERY_EXT_CTRL or VIDIOC_QUERYCTRL said about one control.
private struct QueriedControl {
    var id: UInt32
    var type: UInt32
    var name: String
    var minimum: Int64
    var maximum: Int64
    var step: UInt64
    var defaultValue: Int64
    var flags: UInt32

    init(_ query: v4l2_query_ext_ctrl) {
        id = query.id
        type = query.type
        name = V4L2Device.string(query.name)
        minimum = query.minimum
        maximum = query.maximum
        step = query.step
        defaultValue = query.default_value
        flags = query.flags
    }

    init(_ query: v4l2_queryctrl) {
        id = query.id
        type = query.type
        name = V4L2Device.string(query.name)
        minimum = Int64(query.minimum)
        maximum = Int64(query.maximum)
        step = UInt64(max(0, query.step))
        defaultValue = Int64(query.default_value)
        flags = query.flags
    }
}
