import CVAAPI
import CYUV
import Logging
import VTCore
import VTVAAPI

/// Puts pictures into a driver's NV12 surfaces: by mapping the surface itself (vaDeriveImage)
/// where the driver allows it, else by writing an image of our own and copying it over
/// (vaPutImage), as many AMD drivers require. I420 and YUYV are converted to NV12 on the way.
final class VAAPIUploader {
    static let fourccNV12: UInt32 = 0x3231_564E  // 'N' 'V' '1' '2'

    private let display: VADisplay
    private let width: Int
    private let height: Int
    private let logger: Logger
    private var deriveWorks = true
    private var image: VAImage?

    init(display: VADisplay, width: Int, height: Int, logger: Logger) {
        self.display = display
        self.width = width
        self.height = height
        self.logger = logger
    }

    /// Destroys the image of the vaPutImage path; the display must still be open.
    func close() {
        if let image { _ = vaDestroyImage(display, image.image_id) }
        image = nil
    }

    func upload(_ buffer: PixelBuffer, to surface: VASurfaceID) throws(VAAPIFailure) {
        if deriveWorks {
            var derived = VAImage()
            let status = vaDeriveImage(display, surface, &derived)
            if status == VA_STATUS_SUCCESS && derived.format.fourcc == Self.fourccNV12 {
                defer { _ = vaDestroyImage(display, derived.image_id) }
                try write(buffer, into: derived)
                return
            }
            if status == VA_STATUS_SUCCESS { _ = vaDestroyImage(display, derived.image_id) }
            deriveWorks = false
            logger.debug("vaDeriveImage unavailable (\(String(cString: vaErrorStr(status)))): uploading with vaPutImage")
        }
        let image = try imageForPut()
        try write(buffer, into: image)
        try vaCheck(vaPutImage(display, surface, image.image_id, 0, 0, UInt32(width), UInt32(height),
                               0, 0, UInt32(width), UInt32(height)), "vaPutImage")
    }

    private func imageForPut() throws(VAAPIFailure) -> VAImage {
        if let image { return image }
        var count = vaMaxNumImageFormats(display)
        var formats = [VAImageFormat](repeating: VAImageFormat(), count: Int(max(count, 1)))
        try vaCheck(vaQueryImageFormats(display, &formats, &count), "vaQueryImageFormats")
        guard var format = formats.prefix(Int(count)).first(where: { $0.fourcc == Self.fourccNV12 }) else {
            throw .noNV12Upload
        }
        var created = VAImage()
        try vaCheck(vaCreateImage(display, &format, Int32(width), Int32(height), &created), "vaCreateImage")
        image = created
        return created
    }

    /// Copies the picture into a mapped NV12 image, honouring the image's pitches and plane
    /// offsets.
    private func write(_ buffer: PixelBuffer, into image: VAImage) throws(VAAPIFailure) {
        var mapped: UnsafeMutableRawPointer?
        try vaCheck(vaMapBuffer(display, image.buf, &mapped), "vaMapBuffer(image)")
        defer { _ = vaUnmapBuffer(display, image.buf) }
        guard let base = mapped?.assumingMemoryBound(to: UInt8.self) else {
            throw .call("vaMapBuffer(image)", status: VA_STATUS_ERROR_INVALID_BUFFER)
        }
        let y = base + Int(image.offsets.0)
        let uv = base + Int(image.offsets.1)
        let yPitch = Int32(image.pitches.0)
        let uvPitch = Int32(image.pitches.1)
        let planes = buffer.planes
        let w = Int32(width)
        let h = Int32(height)
        let status: Int32
        switch buffer.format {
        case .nv12:
            CopyPlane(planes[0].baseAddress, Int32(planes[0].bytesPerRow), y, yPitch, w, h)
            CopyPlane(planes[1].baseAddress, Int32(planes[1].bytesPerRow), uv, uvPitch, w, h / 2)
            status = 0
        case .i420:
            status = I420ToNV12(planes[0].baseAddress, Int32(planes[0].bytesPerRow),
                                planes[1].baseAddress, Int32(planes[1].bytesPerRow),
                                planes[2].baseAddress, Int32(planes[2].bytesPerRow),
                                y, yPitch, uv, uvPitch, w, h)
        case .yuyv:
            status = YUY2ToNV12(planes[0].baseAddress, Int32(planes[0].bytesPerRow), y, yPitch, uv, uvPitch, w, h)
        }
        guard status == 0 else {
            throw .conversion(from: buffer.format)
        }
    }
}
