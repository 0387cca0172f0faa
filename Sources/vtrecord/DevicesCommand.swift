import ArgumentParser
import Logging
import VTAudio
import VTCapture
import VTCore
import VTRecorder

/// `vtrecord devices`: the cameras and microphones on this machine.
struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the cameras under /dev and the sound capture devices ALSA knows.",
        discussion: """
            For each camera: its node, card name, driver, bus and the stable /dev/v4l/by-id/ link \
            to it when there is one, and its own microphone when a sound card sits on the same \
            USB port. Other V4L2 nodes (metadata nodes, codecs) are left out. Then each \
            microphone, by the name --audio takes: a sound card's id (stable across reboots, \
            unlike its number) or a PCM of ALSA's configuration (default, pulse, pipewire). \
            With no camera, a line says so and the exit status is 0.
            """
    )

    @Flag(name: .long, help: "Print the list as JSON: an array of cameras {type: camera, path, card, driver, bus_info, by_id, microphone} and microphones {type: microphone, name, description, pcm, bus_info}.")
    var json = false

    func run() throws {
        let scan = CameraDiscovery.scan()
        let logger = Logger(label: "vtrecord")
        for problem in scan.unreadable {
            logger.warning("\(problem.description)")
        }
        let microphones = ALSADevices.microphones()
        func microphone(of camera: CameraDevice) -> String? {
            microphones.first { $0.busInfo != nil && $0.busInfo == camera.busInfo }?.name
        }
        if json {
            var entries: [DeviceJSON] = scan.cameras.map { DeviceJSON($0, microphone: microphone(of: $0)) }
            entries += microphones.map(DeviceJSON.init)
            try printJSON(entries)
            return
        }
        if scan.cameras.isEmpty { print("No cameras found (no video capture device under /dev).") }
        for camera in scan.cameras {
            print("\(camera.path): \(camera.card)")
            print("  driver: \(camera.driver)")
            print("  bus:    \(camera.busInfo)")
            if let link = camera.byID { print("  by-id:  \(link)") }
            if let name = microphone(of: camera) { print("  microphone: \(name) (--audio \(name))") }
        }
        guard !microphones.isEmpty else { return }
        print("Microphones (--audio NAME):")
        for microphone in microphones {
            let pcm = microphone.pcm == microphone.name ? "" : " [\(microphone.pcm)]"
            print("  \(microphone.name): \(microphone.description)\(pcm)")
        }
    }
}

/// One device in `devices --json`: a camera (`by_id` null when udev made no link,
/// `microphone` null when no sound card shares its USB port) or a microphone (`bus_info` null
/// when not known).
struct DeviceJSON: Encodable {
    var type: String
    var path: String?
    var card: String?
    var driver: String?
    var name: String?
    var description: String?
    var pcm: String?
    var busInfo: String?
    var byID: String?
    var microphone: String?

    init(_ camera: CameraDevice, microphone: String?) {
        type = "camera"
        path = camera.path
        card = camera.card
        driver = camera.driver
        busInfo = camera.busInfo
        byID = camera.byID
        self.microphone = microphone
    }

    init(_ microphone: ALSADevices.Microphone) {
        type = "microphone"
        name = microphone.name
        description = microphone.description
        pcm = microphone.pcm
        busInfo = microphone.busInfo
    }

    enum CodingKeys: String, CodingKey {
        case type, path, card, driver, name, description, pcm, busInfo = "bus_info", byID = "by_id", microphone
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        if type == "camera" {
            try container.encode(path, forKey: .path)
            try container.encode(card, forKey: .card)
            try container.encode(driver, forKey: .driver)
            try container.encode(busInfo, forKey: .busInfo)
            try container.encode(byID, forKey: .byID)
            try container.encode(microphone, forKey: .microphone)
        } else {
            try container.encode(name, forKey: .name)
            try container.encode(description, forKey: .description)
            try container.encode(pcm, forKey: .pcm)
            try container.encode(busInfo, forKey: .busInfo)
        }
    }

}
