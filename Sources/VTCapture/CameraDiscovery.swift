import CV4L2
import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// A video capture node and the camera behind it, as VIDIOC_QUERYCAP names them.
public struct CameraDevice: Sendable, Equatable {
    public var path: String
    public var card: String
    public var driver: String
    public var busInfo: String
    /// The stable link under /dev/v4l/by-id/ that points at `path`, when udev made one: it
    /// names the same camera after a replug that gives it another /dev/videoN.
    public var byID: String?

    public init(path: String, card: String, driver: String, busInfo: String, byID: String?) {
        self.path = path
        self.card = card
        self.driver = driver
        self.busInfo = busInfo
        self.byID = byID
    }
}

/// Finding cameras and asking one what it offers, without recording from it.
public enum CameraDiscovery {
    /// The result of a scan: the cameras, and nodes that might have been cameras but could not
    /// be asked (no permission, gone while asking), with the reason.
    public struct Scan: Sendable {
        public var cameras: [CameraDevice]
        public var unreadable: [CaptureError]
    }

    /// Every video capture node under /dev, by number. Metadata nodes (uvcvideo adds one
    /// beside each camera), codecs and other V4L2 devices are left out without complaint.
    public static func scan(directory: String = "/dev", byIDDirectory: String = "/dev/v4l/by-id") -> Scan {
        var scan = Scan(cameras: [], unreadable: [])
        for path in candidatePaths(in: directory) {
            switch query(path) {
            case .success(let camera?):
                var camera = camera
                camera.byID = byIDLink(to: path, in: byIDDirectory)
                scan.cameras.append(camera)
            case .success(nil):
                continue
            case .failure(let error):
                scan.unreadable.append(error)
            }
        }
        return scan
    }

    /// The `videoN` nodes of `directory`, in order of N. Names come from a listing of the
    /// directory and from a stat of video0…video63 each: the listing finds any number, the
    /// stat also finds a node that a listing does not show (one an LD_PRELOAD library
    /// provides, such as the test suite's camera).
    public static func candidatePaths(in directory: String = "/dev") -> [String] {
        var numbers = Set<Int>()
        for name in entries(of: directory) {
            if let number = videoNumber(name) { numbers.insert(number) }
        }
        for number in 0..<64 where !numbers.contains(number) {
            var info = stat()
            if stat("\(directory)/video\(number)", &info) == 0, info.st_mode & S_IFMT == S_IFCHR {
                numbers.insert(number)
            }
        }
        return numbers.sorted().map { "\(directory)/video\($0)" }
    }

    /// N of a name `videoN`, nil for anything else.
    static func videoNumber(_ name: String) -> Int? {
        guard name.hasPrefix("video") else { return nil }
        let digits = name.dropFirst("video".count)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(digits)
    }

    /// Asks one node what it is: a camera, nil for a node that is not a video capture device,
    /// or why it could not be asked.
    static func query(_ path: String) -> Result<CameraDevice?, CaptureError> {
        do throws(CaptureError) {
            let (fd, capabilities) = try V4L2Device.openAndQuery(path)
            // Only asked; nothing was changed that close could fail to hand back.
            try? closeDescriptor(fd)
            guard capabilities.flags & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 else { return .success(nil) }
            return .success(CameraDevice(path: path, card: capabilities.card, driver: capabilities.driver,
                                         busInfo: capabilities.busInfo, byID: nil))
        } catch {
            switch error {
            // Gone since it was listed, a node without a device behind it, or not V4L2 at all.
            case .noSuchDevice, .notACaptureDevice: return .success(nil)
            default: return .failure(error)
            }
        }
    }

    /// The first link (by name) in `directory` that resolves to the same file as `path`.
    public static func byIDLink(to path: String, in directory: String = "/dev/v4l/by-id") -> String? {
        let target = resolved(path) ?? path
        return entries(of: directory).sorted().lazy
            .map { "\(directory)/\($0)" }
            .first { resolved($0) == target }
    }

    /// Formats, sizes and rates, as the recording command would choose from them. Works while
    /// another program records from the camera.
    public static func formats(path: String) throws(CaptureError) -> [CameraFormatOffer] {
        let device = try V4L2Device(path: path, forCapture: false)
        return try device.enumerateFormats()
    }

    /// The camera's controls with their ranges and current values. Works while another
    /// program records from the camera.
    public static func controls(path: String) throws(CaptureError) -> [CameraControl] {
        let device = try V4L2Device(path: path, forCapture: false)
        return try device.controls()
    }

    // MARK: Files

    /// The names in a directory, without . and ..; none when it cannot be read.
    private static func entries(of directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = V4L2Device.string(entry.pointee.d_name)
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The path with every link followed, or nil when it does not lead to a file.
    private static func resolved(_ path: String) -> String? {
        guard let full = realpath(path, nil) else { return nil }
        defer { free(full) }
        return String(cString: full)
    }
}
