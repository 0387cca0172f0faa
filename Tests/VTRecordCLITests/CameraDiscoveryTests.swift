import Foundation
import Testing
import VTTestSupport

/// `vtrecord devices`, `formats`, `controls` and `--control`, run as a user runs them against
/// the fake uvcvideo camera, and checked against what v4l2-ctl says about the same camera.
@Suite struct CameraDiscoveryTests {
    static func vtrecord(_ camera: FakeCamera, _ arguments: [String]) throws -> ProcessResult {
        try Tools.run(Tools.vtrecord, arguments, environment: try camera.environment())
    }

    static func v4l2ctl(_ camera: FakeCamera, _ arguments: [String]) throws -> ProcessResult {
        let r = try Tools.run("v4l2-ctl", ["-d", camera.path] + arguments, environment: try camera.environment())
        try #require(r.status == 0, "v4l2-ctl \(arguments): \(r.stderr)")
        return r
    }

    static func json(_ r: ProcessResult) throws -> [[String: Any]] {
        try #require(r.status == 0, "exit \(r.status): \(r.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [[String: Any]], "\(r.stdoutText)")
    }

    // MARK: devices

    @Test func devicesListsTheCamera() throws {
        // video7: found by number even though /dev does not list it.
        let camera = try FakeCamera(path: "/dev/video7", knobs: [.card("Discovery Test Camera")])
        let text = try Self.vtrecord(camera, ["devices"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdoutText.contains("""
            /dev/video7: Discovery Test Camera
              driver: uvcvideo
              bus:    usb-0000:00:14.0-1
            """), "\(text.stdoutText)")

        let listed = try Self.json(try Self.vtrecord(camera, ["devices", "--json"]))
        let entry = try #require(listed.first { $0["path"] as? String == camera.path }, "\(listed)")
        #expect(entry["card"] as? String == "Discovery Test Camera")
        #expect(entry["driver"] as? String == "uvcvideo")
        #expect(entry["bus_info"] as? String == "usb-0000:00:14.0-1")
        #expect(entry["by_id"] is NSNull, "no /dev/v4l/by-id link leads to a fake node: \(entry)")
        #expect(entry["type"] as? String == "camera")
        #expect(entry["microphone"] is NSNull, "no sound card shares its port: \(entry)")
        #expect(Set(entry.keys) == ["type", "path", "card", "driver", "bus_info", "by_id", "microphone"])
        #expect(try camera.reports().allSatisfy(\.releasedEverything))
    }

    @Test(.enabled(if: CameraDiscoveryTestsSupport.noVideoNodes, "needs a machine without cameras"))
    func devicesLeavesOutANodeThatCannotCapture() throws {
        let camera = try FakeCamera(knobs: [.notCapture])
        let text = try Self.vtrecord(camera, ["devices"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdoutText == "No cameras found (no video capture device under /dev).\n")
        #expect(text.stderr.isEmpty, "a metadata node is not a problem: \(text.stderr)")
        let json = try Self.vtrecord(camera, ["devices", "--json"])
        #expect(json.status == 0)
        #expect(try JSONSerialization.jsonObject(with: json.stdout) as? [Any] != nil)
        #expect((try JSONSerialization.jsonObject(with: json.stdout) as? [Any])?.isEmpty == true, "\(json.stdoutText)")
    }

    // MARK: formats

    /// Sizes and rates that differ per format, so a mix-up between formats shows.
    static let formatTable = "YUYV:640x480@30/15/5,1280x720@10/5,1920x1080@5;MJPG:1920x1080@30/15,1280x720@30;NV12:320x240@30/10"

    @Test func formatsAgreeWithV4l2ctl() throws {
        let camera = try FakeCamera(knobs: [.formats(Self.formatTable)])
        let formats = try Self.json(try Self.vtrecord(camera, ["formats", "--device", camera.path, "--json"]))
        func table(_ formats: [[String: Any]]) -> [String] {
            formats.flatMap { format in
                ((format["sizes"] as? [[String: Any]]) ?? []).map { size in
                    let rates = ((size["fps"] as? [String]) ?? []).compactMap(Int.init).sorted(by: >)
                    return "\(format["fourcc"] ?? "?") \(size["width"] ?? 0)x\(size["height"] ?? 0) "
                        + rates.map(String.init).joined(separator: ",")
                }
            }
        }
        let native = formats.filter { $0["emulated"] as? Bool == false }
        let reference = try Self.v4l2ctl(camera, ["--list-formats-ext"])
        #expect(table(native) == V4L2CtlText.formatTable(reference.stdoutText))
        #expect(table(native).count == 6)
        // Through libv4l2 (-w) v4l2-ctl also sees the formats libv4l2 converts to.
        let wrapped = try Self.v4l2ctl(camera, ["-w", "--list-formats-ext"])
        #expect(table(formats) == V4L2CtlText.formatTable(wrapped.stdoutText))
        #expect(formats.filter { $0["emulated"] as? Bool == true }.map { $0["fourcc"] as? String }
                == V4L2CtlText.fourCCs(wrapped.stdoutText, marked: "emulated"))
        #expect(formats.filter { $0["compressed"] as? Bool == true }.map { $0["fourcc"] as? String } == ["MJPG"])
        #expect(formats.map { $0["format"] as? String } .prefix(3) == ["yuyv", "mjpeg", "nv12"])

        let text = try Self.vtrecord(camera, ["formats", "--device", camera.path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdoutText.hasPrefix("""
            YUYV (YUYV 4:2:2): --format yuyv
              640x480: 30, 15, 5 fps
              1280x720: 10, 5 fps
              1920x1080: 5 fps
            MJPG (Motion-JPEG; compressed): --format mjpeg
            """), "\(text.stdoutText)")
    }

    // MARK: controls

    @Test func controlsAgreeWithV4l2ctl() throws {
        let camera = try FakeCamera()
        let controls = try Self.json(try Self.vtrecord(camera, ["controls", "--device", camera.path, "--json"]))
        let reference = V4L2CtlText.controls(try Self.v4l2ctl(camera, ["--list-ctrls-menus"]).stdoutText)
        #expect(reference.count == 7)
        #expect(controls.map { $0["name"] as? String } == reference.map(\.name))
        let types = ["int": "integer", "bool": "boolean", "menu": "menu"]
        for (control, expected) in zip(controls, reference) {
            let name = expected.name
            #expect(control["type"] as? String == types[expected.type], "\(name)")
            #expect(control["default"] as? Int == expected.fields["default"].flatMap(Int.init), "\(name)")
            #expect(control["value"] as? Int == expected.fields["value"].flatMap(Int.init), "\(name)")
            if let min = expected.fields["min"] { #expect(control["minimum"] as? Int == Int(min), "\(name)") }
            if let max = expected.fields["max"] { #expect(control["maximum"] as? Int == Int(max), "\(name)") }
            if let step = expected.fields["step"] { #expect(control["step"] as? Int == Int(step), "\(name)") }
            #expect(control["flags"] as? [String] == expected.fields["flags"].map { $0.split(separator: ",").map(String.init) } ?? [],
                    "\(name)")
            let menu = ((control["menu"] as? [[String: Any]]) ?? []).map { "\($0["index"] ?? "?"): \($0["name"] ?? "?")" }
            #expect(menu == expected.menu, "\(name)")
        }

        let text = try Self.vtrecord(camera, ["controls", "--device", camera.path])
        #expect(text.status == 0, "\(text.stderr)")
        for line in ["brightness                      integer  min=-64 max=64 step=1 default=0 value=0",
                     "power_line_frequency            menu     min=0 max=2 default=1 value=1 (50 Hz)",
                     "exposure_absolute               integer  min=3 max=2047 step=1 default=250 value=250 flags=inactive"] {
            #expect(text.stdoutText.contains(line), "\(text.stdoutText)")
        }
    }

    @Test func formatsAndControlsWhileAnotherProgramRecords() throws {
        let camera = try FakeCamera(knobs: [.busy])
        #expect(try Self.json(try Self.vtrecord(camera, ["controls", "--json"])).count == 7)
        #expect(try Self.json(try Self.vtrecord(camera, ["formats", "--json"])).count == 7, "four native formats, three libv4l2 converts to")
    }

    // MARK: --control

    /// Records a few frames with a traced camera; the trace has every value the camera took.
    static func recordTraced(_ camera: FakeCamera, _ controls: [String]) throws -> (ProcessResult, String) {
        let output = camera.file("out.h264")
        let r = try Self.vtrecord(camera, ["--device", camera.path, "-o", output, "--size", "640x480",
                                           "--frames", "3", "--quiet", "--speed", "ultrafast"]
                                          + controls.flatMap { ["--control", $0] })
        return (r, output)
    }

    /// The control values the fake camera logged being set, in order, and whether each came
    /// before streaming started.
    static func setValues(inTrace trace: String) -> [String] {
        var values: [String] = []
        for line in trace.split(separator: "\n") {
            if line.hasPrefix("fake-v4l2: control ") { values.append(String(line.dropFirst("fake-v4l2: control ".count))) }
            if line.contains("VIDIOC_STREAMON") { values.append("STREAMON") }
        }
        return values
    }

    @Test func controlValueReachesTheDeviceBeforeStreaming() throws {
        let camera = try FakeCamera(knobs: [.trace])
        let (r, output) = try Self.recordTraced(camera, ["brightness=40", "contrast=0x10"])
        #expect(r.status == 0, "\(r.stderr.suffix(2000))")
        #expect(Self.setValues(inTrace: r.stderr) == ["Brightness = 40", "Contrast = 16", "STREAMON"])
        #expect(FileManager.default.fileExists(atPath: output))
    }

    @Test func menuItemsByNameAndBooleansByWord() throws {
        let camera = try FakeCamera(knobs: [.trace])
        let (r, _) = try Self.recordTraced(camera, ["power_line_frequency=60hz", "Exposure, Auto=manual mode",
                                                    "white_balance_temperature_auto=false"])
        #expect(r.status == 0, "\(r.stderr.suffix(2000))")
        #expect(Self.setValues(inTrace: r.stderr) == [
            "Power Line Frequency = 2", "Exposure, Auto = 1", "White Balance Temperature, Auto = 0", "STREAMON",
        ])
    }

    @Test func unknownControlIsBadUsageSuggestingTheNearest() throws {
        let camera = try FakeCamera(knobs: [.trace])
        let (r, output) = try Self.recordTraced(camera, ["contrast=10", "brightnes=3"])
        #expect(r.status == 2)
        let error = r.stderr.split(separator: "\n").filter { $0.hasPrefix("vtrecord: error:") }
        #expect(error.count == 1, "\(r.stderr.suffix(2000))")
        let message = String(error.first ?? "")
        #expect(message.contains("'brightnes'") && message.contains("did you mean brightness?"), "\(message)")
        let listed = message.components(separatedBy: "Its controls: ").last ?? ""
        #expect(listed.hasPrefix("brightness, "), "nearest first: \(message)")
        #expect(listed.contains("power_line_frequency"), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: output))
        // Every setting is checked before any is applied.
        #expect(Self.setValues(inTrace: r.stderr) == [])
    }

    @Test func outOfRangeIsBadUsageGivingTheRange() throws {
        let camera = try FakeCamera()
        let (r, output) = try Self.recordTraced(camera, ["brightness=200"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("--control brightness=200 is out of range: brightness takes an integer from -64 to 64"),
                "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
        let menu = try Self.recordTraced(camera, ["power_line_frequency=45hz"])
        #expect(menu.0.status == 2)
        #expect(menu.0.stderr.contains("0 (Disabled), 1 (50 Hz), 2 (60 Hz)"), "\(menu.0.stderr)")
        #expect(!FileManager.default.fileExists(atPath: menu.1))
    }

    @Test func controlNeedsACameraAndANameAndAValue() throws {
        let dir = try TemporaryDirectory()
        let pattern = try Tools.vtrecord(["--test-pattern", "--frames", "1", "-o", dir.path("x.h264"),
                                          "--control", "brightness=3"])
        #expect(pattern.status == 2)
        #expect(pattern.stderr.contains("--control applies to a camera"), "\(pattern.stderr)")
        for bad in ["=3", "brightness=", "brightness"] {
            let r = try Tools.vtrecord(["--device", "/dev/video0", "-o", dir.path("x.h264"), "--control", bad])
            #expect(r.status == 2, "\(bad)")
            #expect(r.stderr.contains("--control"), "\(bad): \(r.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty)
    }
}

enum CameraDiscoveryTestsSupport {
    /// True when this machine has no /dev/videoN of its own.
    static let noVideoNodes: Bool = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []
        return !names.contains { $0.hasPrefix("video") }
    }()
}
