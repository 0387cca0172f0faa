import Testing
@testable import VTCapture

/// Control names and values as `--control` reads them: pure functions, no camera.
@Suite struct CameraControlTests {
    @Test(arguments: [
        ("White Balance Temperature, Auto", "white_balance_temperature_auto"),
        ("Exposure (Absolute)", "exposure_absolute"),
        ("Exposure, Auto", "exposure_auto"),
        ("Power Line Frequency", "power_line_frequency"),
        ("  Brightness ", "brightness"),
        ("Gain, Automatic (AGC)", "gain_automatic_agc"),
        ("H.264 I-Frame Period", "h_264_i_frame_period"),
        ("Zoom--Absolute__", "zoom_absolute"),
        // Only ASCII letters and digits count, as for v4l2-ctl's isalnum() in the C locale.
        ("Schärfe", "sch_rfe"),
        ("", ""),
        ("(), ", ""),
    ])
    func namesAreNormalisedAsV4l2ctlSpellsThem(_ label: String, _ expected: String) {
        #expect(CameraControl.normalizedName(label) == expected)
    }

    static let brightness = CameraControl(id: 0x0098_0900, label: "Brightness", kind: .integer,
                                          minimum: -64, maximum: 64, step: 1, defaultValue: 0, value: 0)
    static let autoWhiteBalance = CameraControl(id: 0x0098_090C, label: "White Balance Temperature, Auto",
                                                kind: .boolean, minimum: 0, maximum: 1, step: 1,
                                                defaultValue: 1, value: 1)
    static let powerLine = CameraControl(
        id: 0x0098_0918, label: "Power Line Frequency", kind: .menu, minimum: 0, maximum: 2, step: 1,
        defaultValue: 1, value: 1,
        menu: [.init(index: 0, name: "Disabled"), .init(index: 1, name: "50 Hz"), .init(index: 2, name: "60 Hz")])
    /// A menu with gaps, as uvcvideo reports exposure_auto.
    static let exposureAuto = CameraControl(
        id: 0x009A_0901, label: "Exposure, Auto", kind: .menu, minimum: 0, maximum: 3, step: 1,
        defaultValue: 3, value: 3,
        menu: [.init(index: 1, name: "Manual Mode"), .init(index: 3, name: "Aperture Priority Mode")])

    @Test func integersMustBeInRange() throws {
        #expect(try Self.brightness.value(for: "20") == 20)
        #expect(try Self.brightness.value(for: "-64") == -64)
        #expect(try Self.brightness.value(for: "+64") == 64)
        #expect(try Self.brightness.value(for: "0x10") == 16)
        #expect(throws: ControlError.Problem.outOfRange) { try Self.brightness.value(for: "65") }
        #expect(throws: ControlError.Problem.outOfRange) { try Self.brightness.value(for: "-200") }
        #expect(throws: ControlError.Problem.notAValue) { try Self.brightness.value(for: "bright") }
        #expect(throws: ControlError.Problem.notAValue) { try Self.brightness.value(for: "2.5") }
    }

    @Test func booleansTakeZeroOneTrueFalse() throws {
        #expect(try Self.autoWhiteBalance.value(for: "true") == 1)
        #expect(try Self.autoWhiteBalance.value(for: "FALSE") == 0)
        #expect(try Self.autoWhiteBalance.value(for: "1") == 1)
        #expect(try Self.autoWhiteBalance.value(for: "0") == 0)
        #expect(throws: ControlError.Problem.notAValue) { try Self.autoWhiteBalance.value(for: "2") }
        #expect(throws: ControlError.Problem.notAValue) { try Self.autoWhiteBalance.value(for: "on") }
    }

    @Test func menuItemsByIndexOrByNameWhateverTheSpelling() throws {
        for spelling in ["50hz", "50 Hz", "50_HZ", "50-hz"] {
            #expect(try Self.powerLine.value(for: spelling) == 1, "\(spelling)")
        }
        #expect(try Self.powerLine.value(for: "disabled") == 0)
        #expect(try Self.powerLine.value(for: "2") == 2)
        #expect(throws: ControlError.Problem.noSuchMenuItem) { try Self.powerLine.value(for: "45hz") }
        #expect(throws: ControlError.Problem.outOfRange) { try Self.powerLine.value(for: "3") }
        // An index inside the range that the driver does not offer.
        #expect(throws: ControlError.Problem.noSuchMenuItem) { try Self.exposureAuto.value(for: "0") }
        #expect(try Self.exposureAuto.value(for: "manual_mode") == 1)
        #expect(try Self.exposureAuto.value(for: "3") == 3)
    }

    @Test func readOnlyAndStringControlsAreNotSet() {
        var locked = Self.brightness
        locked.flags = .readOnly
        #expect(throws: ControlError.Problem.readOnly) { try locked.value(for: "1") }
        let text = CameraControl(id: 1, label: "Name", kind: .string, minimum: 0, maximum: 32, step: 1,
                                 defaultValue: 0, value: nil)
        #expect(throws: ControlError.Problem.cannotSet) { try text.value(for: "x") }
    }

    @Test func nearestNamesComeFirst() {
        let known = ["contrast", "saturation", "brightness", "exposure_auto", "exposure_absolute"]
        #expect(CameraControl.nearest(to: "brightnes", in: known).first == "brightness")
        #expect(CameraControl.nearest(to: "Contrst", in: known).first == "contrast")
        #expect(CameraControl.nearest(to: "exposure_absolut", in: known).prefix(2) == ["exposure_absolute", "exposure_auto"])
        #expect(Set(CameraControl.nearest(to: "x", in: known)) == Set(known))
    }

    @Test func unknownControlMessageSuggestsTheNearestAndListsTheRest() {
        let error = ControlError(path: "/dev/video0", setting: ControlSetting(name: "brightnes", value: "3"),
                                 control: nil, problem: .unknownControl(known: ["brightness", "contrast"]))
        #expect(error.exitStatus == .usage)
        #expect(error.description.contains("'brightnes'"))
        #expect(error.description.contains("did you mean brightness?"))
        #expect(error.description.contains("brightness, contrast"))
        let far = ControlError(path: "/dev/video0", setting: ControlSetting(name: "zoom", value: "3"),
                               control: nil, problem: .unknownControl(known: ["brightness"]))
        #expect(!far.description.contains("did you mean"), "\(far.description)")
    }

    @Test func outOfRangeMessageGivesTheRange() {
        let error = ControlError(path: "/dev/video0", setting: ControlSetting(name: "brightness", value: "200"),
                                 control: Self.brightness, problem: .outOfRange)
        #expect(error.description == "--control brightness=200 is out of range: brightness takes an integer from -64 to 64")
        #expect(CaptureError.control(error).exitStatus == .usage)
    }

    @Test func settingsSplitAtTheFirstEqualsSign() {
        #expect(ControlSetting(parsing: "brightness=20") == ControlSetting(name: "brightness", value: "20"))
        #expect(ControlSetting(parsing: "exposure_auto=Manual Mode") == ControlSetting(name: "exposure_auto", value: "Manual Mode"))
        #expect(ControlSetting(parsing: "a=b=c") == ControlSetting(name: "a", value: "b=c"))
        #expect(ControlSetting(parsing: "=3") == nil)
        #expect(ControlSetting(parsing: "brightness=") == nil)
        #expect(ControlSetting(parsing: "brightness") == nil)
    }
}
