import Foundation
import Testing
import VTTestSupport

/// A recording from a camera that fails part-way — the output is a full device or hits the
/// file-size limit, or the encoder refuses a picture — still gives every V4L2 buffer back to
/// the driver and unmaps it before the process exits, also the frame the constant-rate grid
/// (`--timing cfr`, the cameras' default) holds back and a buffer leased without a copy (NV12),
/// and hands a hardware encoder back whole.
///
/// Nested in CameraRecordingTests, whose `.serialized` covers it: real-time capture.
extension CameraRecordingTests {
    @Suite struct CameraFailureTests {
        enum Fault: String, CaseIterable, Sendable {
            case fullDevice = "/dev/full"
            case fileSizeLimit = "RLIMIT_FSIZE"
            case encoder = "vaEndPicture fails"
        }

        struct Case: CustomTestStringConvertible, Sendable {
            var format: String
            var fault: Fault
            var testDescription: String { "\(format), \(fault.rawValue)" }
        }

        static let cases = ["nv12", "yuyv", "mjpeg"].flatMap { format in Fault.allCases.map { Case(format: format, fault: $0) } }

        @Test(arguments: cases)
        func aFailedRecordingGivesEveryCameraBufferBack(_ c: Case) throws {
            let camera = try FakeCamera(knobs: [.formats("YUYV:320x240@30;NV12:320x240@30;MJPG:320x240@30"),
                                                .noise(amplitude: 40)])
            let va = try FakeVADevice(knobs: [.failing(["vaEndPicture"])])
            let out = c.fault == .fullDevice ? "/dev/full" : camera.file("out.h264")
            // Noisy pictures near-lossless, so the file passes the limit within a few frames.
            var arguments = ["--device", camera.path, "--format", c.format, "--size", "320x240", "--fps", "30",
                             "--frames", "90", "--timing", "cfr", "--qp", "1", "-o", out, "--quiet", "--speed", "ultrafast"]
            var environment = try camera.environment()
            if c.fault == .encoder {
                arguments += ["--encoder", "vaapi", "--va-device", va.devicePath]
                environment = try va.environment(base: environment)
            }
            // ulimit applies to the shell and what it execs: vtrecord itself. 2 MiB (sh counts
            // 512-byte blocks): more than the camera's buffers (the fake camera keeps them in a file
            // too), less than the recording.
            let limit = c.fault == .fileSizeLimit ? "ulimit -f 4096; " : ""
            let r = try ChildProcess.run(["/bin/sh", "-c", limit + "exec \"$0\" \"$@\"", Tools.vtrecord] + arguments,
                                         environment: environment, timeout: .seconds(60))
            #expect(r.status == (c.fault == .encoder ? 4 : 5), "\(r.transcript)")
            let errors = r.standardError.split(separator: "\n").filter { $0.hasPrefix("vtrecord: error:") }
            #expect(errors.count == 1, "\(r.standardError)")
            let report = try camera.report()
            #expect(report.exitPath == "exit")
            #expect(report.mappedBuffers == 0 && report.releasedEverything, "\(report)")
            #expect(report.framesDelivered > 0, "the fault came while the camera was streaming: \(report)")
            if c.fault == .encoder {
                let driver = try va.report()
                #expect(driver.terminated)
                #expect(driver.liveObjects?.none == true, "\(String(describing: driver.liveObjects))")
                #expect(driver.violations.isEmpty, "\(driver.violations)")
            }
        }
    }
}
