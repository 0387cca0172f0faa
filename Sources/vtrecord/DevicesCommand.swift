import ArgumentParser
import Logging
import VTCapture
import VTCore
import VTRecorder

/// `vtrecord devices`: the cameras on this machine.
struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the video capture devices (cameras) under /dev.",
        discussion: """
            For each camera: its node, card name, driver, bus and the stable /dev/v4l/by-id/ link \
            to it when there is one. Other V4L2 nodes (metadata nodes, codecs) are left out. \
            With no camera, a line says so and the exit status is 0; --json then prints [].
            """
    )

    @Flag(name: .long, help: "Print the list as JSON: an array of {path, card, driver, bus_info, by_id}.")
    var json = false

    func run() throws {
        let scan = CameraDiscovery.scan()
        let logger = Logger(label: "vtrecord")
        for problem in scan.unreadable {
            logger.warning("\(problem.description)")
        }
        if json {
            try printJSON(scan.cameras.map(DeviceJSON.init))
            return
        }
        guard !scan.cameras.isEmpty else {
            print("No cameras found (no video capture device under /dev).")
            return
        }
        for camera in scan.cameras {
            print("\(camera.path): \(camera.card)")
            print("  driver: \(camera.driver)")
            print("  bus:    \(camera.busInfo)")
            if let link = camera.byID { print("  by-id:  \(link)") }
        }
    }
}

/// One camera in `devices --json`; `by_id` is null when udev made no link.
struct DeviceJSON: Encodable {
    var path: String
    var card: String
    var driver: String
    var busInfo: String
    @NullWhenAbsent var byID: String?

    init(_ camera: CameraDevice) {
        path = camera.path
        card = camera.card
        driver = camera.driver
        busInfo = camera.busInfo
        byID = camera.byID
    }

    enum CodingKeys: String, CodingKey {
        case path, card, driver, busInfo = "bus_info", byID = "by_id"
    }

}
