import Foundation
import Testing
import VTCapture

/// Which /dev entries are camera candidates and which by-id link names one, on a directory
/// made for the test.
@Suite struct CameraNodeTests {
    @Test func candidatesAreVideoNodesInNumericOrder() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for name in ["video10", "video2", "video", "videox", "video2a", "vbi0", "media0"] {
            #expect(FileManager.default.createFile(atPath: "\(directory)/\(name)", contents: nil))
        }
        #expect(CameraDiscovery.candidatePaths(in: directory) == ["\(directory)/video2", "\(directory)/video10"])
        #expect(CameraDiscovery.candidatePaths(in: "\(directory)/missing") == [])
    }

    @Test func byIDLinkIsTheLinkThatLeadsToTheNode() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let byID = "\(directory)/v4l/by-id"
        try FileManager.default.createDirectory(atPath: byID, withIntermediateDirectories: true)
        for name in ["video0", "video1", "video2"] {
            #expect(FileManager.default.createFile(atPath: "\(directory)/\(name)", contents: nil))
        }
        // udev's links are relative, like these.
        try FileManager.default.createSymbolicLink(atPath: "\(byID)/usb-Cam_A-video-index0", withDestinationPath: "../../video0")
        try FileManager.default.createSymbolicLink(atPath: "\(byID)/usb-Cam_A-video-index1", withDestinationPath: "../../video1")
        try FileManager.default.createSymbolicLink(atPath: "\(byID)/usb-Cam_B-video-index0", withDestinationPath: "../../video2")
        #expect(CameraDiscovery.byIDLink(to: "\(directory)/video0", in: byID) == "\(byID)/usb-Cam_A-video-index0")
        #expect(CameraDiscovery.byIDLink(to: "\(directory)/video2", in: byID) == "\(byID)/usb-Cam_B-video-index0")
        #expect(CameraDiscovery.byIDLink(to: "\(directory)/video3", in: byID) == nil)
        #expect(CameraDiscovery.byIDLink(to: "\(directory)/video0", in: "\(directory)/none") == nil)
    }

    static func temporaryDirectory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("camera-nodes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        // realpath, so links resolved inside it compare equal to paths built from it.
        return url.resolvingSymlinksInPath().path
    }
}
