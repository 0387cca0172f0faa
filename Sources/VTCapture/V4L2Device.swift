import CV4L2
import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// An open V4L2 device node, reached through libv4l2 so that formats the camera sends but
/// vtrecord cannot read (Bayer, vendor codes) arrive converted.
///
/// Every ioctl goes through `ioctl(_:_:)`, which makes it through `systemCall` and hands back
/// errno, so each caller decides what an error means where it happens (EBUSY from S_FMT is
/// "busy", ENODEV from DQBUF is "unplugged"); `require(_:_:)` is the plain case.
final class V4L2Device {
    let path: String
    private(set) var fd: Int32

    /// Opens `path`, non-blocking (frames are waited for with poll, so a stop request is never
    /// stuck behind a DQBUF), and checks that it is a streaming video capture device before
    /// handing it to libv4l2 (which would complain on stderr about anything else).
    ///
    /// `forCapture`: also find out now whether another program is streaming from the camera.
    /// Without it the device is opened only to be looked at (formats, controls), which works
    /// while another program records.
    init(path: String, forCapture: Bool = true) throws(CaptureError) {
        self.path = path
        let (opened, capabilities) = try Self.openAndQuery(path)
        do throws(CaptureError) {
            guard capabilities.flags & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 else {
                throw .notACaptureDevice(path: path, what: Self.describe(capabilities: capabilities.flags))
            }
            guard capabilities.flags & UInt32(V4L2_CAP_STREAMING) != 0 else {
                throw .notACaptureDevice(path: path, what: "a capture device without streaming I/O, which vtrecord needs")
            }
            // Another program streaming from the camera makes S_FMT fail with EBUSY. Asking
            // here, for the format already set, finds that out before libv4l2, which would
            // print its own line about it.
            var current = v4l2_format()
            current.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            if forCapture, (try? Self.kernelIoctl(opened, vt_VIDIOC_G_FMT, &current)) != nil {
                do throws(SystemError) {
                    try Self.kernelIoctl(opened, vt_VIDIOC_S_FMT, &current)
                } catch where error.errno == EBUSY {
                    throw .deviceBusy(path: path)
                } catch {
                    // Anything else S_FMT has to say, it says again when the format is set.
                }
            }
            do {
                try systemCall("v4l2_fd_open") { v4l2_fd_open(opened, 0) }
            } catch {
                throw .deviceCall(path: path, error)
            }
        } catch {
            try? closeDescriptor(opened)
            throw error
        }
        fd = opened
    }

    /// Opens `path` (read-write, non-blocking) without libv4l2 and asks it VIDIOC_QUERYCAP.
    /// The caller owns the descriptor. A node that is not a V4L2 device at all is
    /// `.notACaptureDevice`, saying what it is.
    static func openAndQuery(_ path: String) throws(CaptureError) -> (fd: Int32, capabilities: Capabilities) {
        let fd: Int32
        do {
            fd = try systemCall("open") { open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC) }
        } catch {
            switch error.errno {
            case ENOENT, ENXIO, ENODEV: throw .noSuchDevice(path: path)
            case EACCES, EPERM: throw .devicePermissionDenied(path: path)
            case EBUSY: throw .deviceBusy(path: path)
            case EISDIR: throw .notACaptureDevice(path: path, what: "a directory")
            default: throw .deviceCall(path: path, error)
            }
        }
        var cap = v4l2_capability()
        do {
            try kernelIoctl(fd, vt_VIDIOC_QUERYCAP, &cap)
        } catch {
            try? closeDescriptor(fd)
            switch error.errno {
            case ENOTTY, EINVAL: throw .notACaptureDevice(path: path, what: describeNonV4L2Node(path))
            case ENODEV, EIO, ENXIO: throw .noSuchDevice(path: path)
            default: throw .deviceCall(path: path, error)
            }
        }
        let flags = cap.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? cap.device_caps : cap.capabilities
        return (fd, Capabilities(driver: string(cap.driver), card: string(cap.card),
                                 busInfo: string(cap.bus_info), flags: flags))
    }

    deinit { close() }

    func close() {
        guard fd >= 0 else { return }
        // The camera is being let go of: what close has to say about it changes nothing.
        _ = try? closeDescriptor(fd, call: "v4l2_close") { v4l2_close($0) }
        fd = -1
    }

    /// Runs one ioctl through libv4l2; nil on success, else errno.
    func ioctl<T>(_ request: UInt, _ argument: inout T) -> Int32? {
        do {
            try systemCall(Self.call(request)) {
                withUnsafeMutablePointer(to: &argument) { vt_v4l2_ioctl(fd, request, $0) }
            }
            return nil
        } catch {
            return error.errno
        }
    }

    /// One ioctl straight to the kernel, for a node libv4l2 has not been given (yet).
    @discardableResult
    static func kernelIoctl<T>(_ fd: Int32, _ request: UInt, _ argument: inout T) throws(SystemError) -> Int32 {
        try systemCall(call(request)) { withUnsafeMutablePointer(to: &argument) { Glibc.ioctl(fd, request, $0) } }
    }

    /// Runs one ioctl and turns any error into the plain `CaptureError` for it, naming the
    /// device as gone when it is.
    func require<T>(_ request: UInt, _ argument: inout T) throws(CaptureError) {
        guard let code = ioctl(request, &argument) else { return }
        throw error(for: code, request: request)
    }

    /// The error an unexpected errno from `request` stands for.
    func error(for code: Int32, request: UInt) -> CaptureError {
        switch code {
        case ENODEV, EIO, ENXIO: .unplugged(path: path)
        case EBUSY: .deviceBusy(path: path)
        default: .deviceCall(path: path, SystemError(call: Self.call(request), errno: code))
        }
    }

    /// How an ioctl is named in errors and in `SystemCallFaults`: `ioctl(VIDIOC_DQBUF)`.
    static func call(_ request: UInt) -> String {
        "ioctl(\(requestName(request)))"
    }

    private static func requestName(_ request: UInt) -> String {
        switch request {
        case vt_VIDIOC_QUERYCAP: "VIDIOC_QUERYCAP"
        case vt_VIDIOC_ENUM_FMT: "VIDIOC_ENUM_FMT"
        case vt_VIDIOC_ENUM_FRAMESIZES: "VIDIOC_ENUM_FRAMESIZES"
        case vt_VIDIOC_ENUM_FRAMEINTERVALS: "VIDIOC_ENUM_FRAMEINTERVALS"
        case vt_VIDIOC_ENUMINPUT: "VIDIOC_ENUMINPUT"
        case vt_VIDIOC_G_INPUT: "VIDIOC_G_INPUT"
        case vt_VIDIOC_G_FMT: "VIDIOC_G_FMT"
        case vt_VIDIOC_S_FMT: "VIDIOC_S_FMT"
        case vt_VIDIOC_TRY_FMT: "VIDIOC_TRY_FMT"
        case vt_VIDIOC_G_PARM: "VIDIOC_G_PARM"
        case vt_VIDIOC_S_PARM: "VIDIOC_S_PARM"
        case vt_VIDIOC_REQBUFS: "VIDIOC_REQBUFS"
        case vt_VIDIOC_QUERYBUF: "VIDIOC_QUERYBUF"
        case vt_VIDIOC_QBUF: "VIDIOC_QBUF"
        case vt_VIDIOC_DQBUF: "VIDIOC_DQBUF"
        case vt_VIDIOC_STREAMON: "VIDIOC_STREAMON"
        case vt_VIDIOC_STREAMOFF: "VIDIOC_STREAMOFF"
        case vt_VIDIOC_QUERYCTRL: "VIDIOC_QUERYCTRL"
        case vt_VIDIOC_QUERY_EXT_CTRL: "VIDIOC_QUERY_EXT_CTRL"
        case vt_VIDIOC_QUERYMENU: "VIDIOC_QUERYMENU"
        case vt_VIDIOC_G_CTRL: "VIDIOC_G_CTRL"
        case vt_VIDIOC_S_CTRL: "VIDIOC_S_CTRL"
        case vt_VIDIOC_G_EXT_CTRLS: "VIDIOC_G_EXT_CTRLS"
        case vt_VIDIOC_S_EXT_CTRLS: "VIDIOC_S_EXT_CTRLS"
        default: "0x" + String(request, radix: 16)
        }
    }

    // MARK: Capabilities

    struct Capabilities {
        var driver: String
        var card: String
        var busInfo: String
        /// The node's own capabilities (device_caps when the driver reports them).
        var flags: UInt32
    }

    /// What a node that does not answer QUERYCAP is, for the error message.
    static func describeNonV4L2Node(_ path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return "not a V4L2 device" }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return "a regular file"
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a named pipe"
        case S_IFCHR: return "a character device that is not a V4L2 device"
        default: return "not a V4L2 device"
        }
    }

    /// What a V4L2 node that cannot capture video is, from its capability flags.
    static func describe(capabilities flags: UInt32) -> String {
        let kinds: [(UInt32, String)] = [
            (UInt32(V4L2_CAP_META_CAPTURE), "a metadata capture node (UVC cameras add one beside each video node)"),
            (UInt32(V4L2_CAP_VIDEO_OUTPUT), "a video output device"),
            (UInt32(V4L2_CAP_VIDEO_M2M), "a memory-to-memory device (codec or scaler)"),
            (UInt32(V4L2_CAP_VIDEO_CAPTURE_MPLANE), "a multi-planar capture device, which vtrecord does not support"),
            (UInt32(V4L2_CAP_RADIO), "a radio tuner"),
            (UInt32(V4L2_CAP_VBI_CAPTURE), "a VBI capture device"),
            (UInt32(V4L2_CAP_SDR_CAPTURE), "a software-defined-radio device"),
            (UInt32(V4L2_CAP_TOUCH), "a touch device"),
        ]
        return kinds.first { flags & $0.0 != 0 }?.1 ?? "a V4L2 device without video capture"
    }

    // MARK: Formats

    /// Every format, size and rate the device offers, in the driver's order.
    func enumerateFormats() throws(CaptureError) -> [CameraFormatOffer] {
        var formats: [CameraFormatOffer] = []
        var index: UInt32 = 0
        while true {
            var desc = v4l2_fmtdesc()
            desc.index = index
            desc.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            if let code = ioctl(vt_VIDIOC_ENUM_FMT, &desc) {
                if code == EINVAL { break }
                throw error(for: code, request: vt_VIDIOC_ENUM_FMT)
            }
            let fourCC = FourCC(rawValue: desc.pixelformat)
            formats.append(CameraFormatOffer(
                fourCC: fourCC, name: Self.string(desc.description),
                isEmulated: desc.flags & UInt32(V4L2_FMT_FLAG_EMULATED) != 0,
                isCompressed: desc.flags & UInt32(V4L2_FMT_FLAG_COMPRESSED) != 0,
                sizes: try frameSizes(fourCC)))
            index += 1
        }
        return formats
    }

    private func frameSizes(_ fourCC: FourCC) throws(CaptureError) -> [CameraFrameSize] {
        var sizes: [CameraFrameSize] = []
        var index: UInt32 = 0
        while true {
            var size = v4l2_frmsizeenum()
            size.index = index
            size.pixel_format = fourCC.rawValue
            if let code = ioctl(vt_VIDIOC_ENUM_FRAMESIZES, &size) {
                if code == EINVAL || code == ENOTTY { break }
                throw error(for: code, request: vt_VIDIOC_ENUM_FRAMESIZES)
            }
            switch size.type {
            case V4L2_FRMSIZE_TYPE_DISCRETE.rawValue:
                let frame = FrameSize(width: Int(size.discrete.width), height: Int(size.discrete.height))
                sizes.append(CameraFrameSize(size: frame, frameRates: try frameRates(fourCC, frame)))
            default:
                // Stepwise or continuous: list the largest and the smallest size.
                let s = size.stepwise
                for frame in [FrameSize(width: Int(s.max_width), height: Int(s.max_height)),
                              FrameSize(width: Int(s.min_width), height: Int(s.min_height))] {
                    sizes.append(CameraFrameSize(size: frame, frameRates: try frameRates(fourCC, frame)))
                }
                return sizes
            }
            index += 1
        }
        return sizes
    }

    private func frameRates(_ fourCC: FourCC, _ frame: FrameSize) throws(CaptureError) -> [FrameRate] {
        var rates: [FrameRate] = []
        var index: UInt32 = 0
        while true {
            var interval = v4l2_frmivalenum()
            interval.index = index
            interval.pixel_format = fourCC.rawValue
            interval.width = UInt32(frame.width)
            interval.height = UInt32(frame.height)
            if let code = ioctl(vt_VIDIOC_ENUM_FRAMEINTERVALS, &interval) {
                if code == EINVAL || code == ENOTTY { break }
                throw error(for: code, request: vt_VIDIOC_ENUM_FRAMEINTERVALS)
            }
            if interval.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue {
                if let rate = Self.rate(interval.discrete) { rates.append(rate) }
            } else {
                // A range: its fastest (smallest interval) and slowest ends.
                let s = interval.stepwise
                rates += [Self.rate(s.min), Self.rate(s.max)].compactMap { $0 }
                break
            }
            index += 1
        }
        return rates
    }

    /// The rate of a frame interval (seconds per frame as numerator/denominator).
    static func rate(_ interval: v4l2_fract) -> FrameRate? {
        guard interval.numerator > 0, interval.denominator > 0 else { return nil }
        return FrameRate(numerator: Int(interval.denominator), denominator: Int(interval.numerator))
    }

    // MARK: Format and rate

    /// The negotiated image layout. (Pixel aspect from VIDIOC_CROPCAP is not asked: UVC
    /// cameras have square pixels.)
    struct NegotiatedImage: Equatable {
        var fourCC: FourCC
        var width: Int
        var height: Int
        var bytesPerLine: Int
    }

    /// VIDIOC_S_FMT, then what the driver chose. EBUSY here means another program streams.
    func setFormat(_ fourCC: FourCC, _ size: FrameSize) throws(CaptureError) -> NegotiatedImage {
        var format = v4l2_format()
        format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        format.fmt.pix.width = UInt32(size.width)
        format.fmt.pix.height = UInt32(size.height)
        format.fmt.pix.pixelformat = fourCC.rawValue
        format.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        try require(vt_VIDIOC_S_FMT, &format)
        let pix = format.fmt.pix
        return NegotiatedImage(fourCC: FourCC(rawValue: pix.pixelformat), width: Int(pix.width),
                               height: Int(pix.height), bytesPerLine: Int(pix.bytesperline))
    }

    /// VIDIOC_S_PARM with the asked rate (after S_FMT: uvcvideo resets the rate there), then
    /// the rate the driver chose; nil when the driver cannot set a rate at all.
    func setFrameRate(_ rate: FrameRate) throws(CaptureError) -> FrameRate? {
        var parm = v4l2_streamparm()
        parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        if let code = ioctl(vt_VIDIOC_G_PARM, &parm) {
            if code == ENOTTY || code == EINVAL { return nil }
            throw error(for: code, request: vt_VIDIOC_G_PARM)
        }
        guard parm.parm.capture.capability & UInt32(V4L2_CAP_TIMEPERFRAME) != 0 else {
            return Self.rate(parm.parm.capture.timeperframe)
        }
        parm.parm.capture.timeperframe = v4l2_fract(numerator: UInt32(rate.denominator),
                                                    denominator: UInt32(rate.numerator))
        try require(vt_VIDIOC_S_PARM, &parm)
        return Self.rate(parm.parm.capture.timeperframe)
    }

    // MARK: Helpers

    /// A fixed-size C char array (imported as a tuple) as a String.
    static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
