import ArgumentParser
import VTCapture
import VTCore
import VTRecorder

/// `vtrecord controls`: a camera's controls, as `v4l2-ctl --list-ctrls-menus` lists them.
struct Controls: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "controls",
        abstract: "List a camera's controls with their ranges, menus and current values.",
        discussion: """
            Names are the driver's, lower-cased with punctuation turned into underscores, as \
            v4l2-ctl spells them; they are what --control NAME=VALUE takes when recording.
            """
    )

    @OptionGroup var camera: DeviceOption

    var device: String { camera.path }

    @Flag(name: .long, help: "Print the controls as JSON.")
    var json = false

    func run() throws {
        let controls = try CameraDiscovery.controls(path: device)
        if json {
            try printJSON(controls.map(ControlJSON.init))
            return
        }
        guard !controls.isEmpty else {
            print("\(device) has no controls.")
            return
        }
        let width = controls.map(\.name.count).max() ?? 0
        let typeWidth = controls.map(\.kind.rawValue.count).max() ?? 0
        for (index, control) in controls.enumerated() {
            if index == 0 || control.group != controls[index - 1].group {
                if index > 0 { print("") }
                print(control.group ?? "Controls")
            }
            let name = control.name.padding(toLength: width, withPad: " ", startingAt: 0)
            let type = control.kind.rawValue.padding(toLength: typeWidth, withPad: " ", startingAt: 0)
            print("  \(name)  \(type)  \(Self.describe(control))")
            for item in control.menu {
                print("      \(item.index): \(item.name)")
            }
        }
    }

    /// "min=-64 max=64 step=1 default=0 value=0", with the menu item's name after a menu's
    /// value and the flags that matter last.
    static func describe(_ control: CameraControl) -> String {
        var fields: [String] = []
        switch control.kind {
        case .integer, .integer64:
            fields += ["min=\(control.minimum)", "max=\(control.maximum)", "step=\(control.step)"]
        case .menu, .integerMenu, .bitmask:
            fields += ["min=\(control.minimum)", "max=\(control.maximum)"]
        case .boolean, .button, .string, .other:
            break
        }
        if ![.button, .string, .other].contains(control.kind) {
            fields.append("default=\(control.defaultValue)")
        }
        if let value = control.value {
            var shown = "value=\(value)"
            if let item = control.menuItem(value), control.kind == .menu { shown += " (\(item.name))" }
            fields.append(shown)
        }
        if !control.flags.names.isEmpty {
            fields.append("flags=\(control.flags.names.joined(separator: ","))")
        }
        return fields.joined(separator: " ")
    }
}

/// One control in `controls --json`. `value` is null when the driver gives none (buttons,
/// write-only controls); `menu` is empty except for menu controls.
struct ControlJSON: Encodable {
    struct Item: Encodable {
        var index: Int64
        var name: String
    }

    var name: String
    var label: String
    var id: UInt32
    @NullWhenAbsent var group: String?
    var type: String
    var minimum: Int64
    var maximum: Int64
    var step: UInt64
    var defaultValue: Int64
    @NullWhenAbsent var value: Int64?
    var flags: [String]
    var menu: [Item]

    init(_ control: CameraControl) {
        name = control.name
        label = control.label
        id = control.id
        group = control.group
        type = control.kind.rawValue
        minimum = control.minimum
        maximum = control.maximum
        step = control.step
        defaultValue = control.defaultValue
        value = control.value
        flags = control.flags.names
        menu = control.menu.map { Item(index: $0.index, name: $0.name) }
    }

    enum CodingKeys: String, CodingKey {
        case name, label, id, group, type, minimum, maximum, step, defaultValue = "default", value, flags, menu
    }

}
