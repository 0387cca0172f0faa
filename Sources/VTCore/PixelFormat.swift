/// The layout of a `PixelBuffer` in memory: what flows between sources and encoders. A
/// camera's own format is a `CameraPixelFormat`; a source's whole picture stream (layout, size,
/// rate, aspect) is a `CaptureFormat`.
public enum PixelFormat: String, Sendable, CaseIterable {
    /// Planar 4:2:0: Y, then U (Cb), then V (Cr). V4L2's YU12, Y4M's C420.
    case i420
    /// Semi-planar 4:2:0: Y, then interleaved CbCr. The native input of VA-API encoders.
    case nv12
    /// Packed 4:2:2: Y0 Cb Y1 Cr. What most UVC cameras deliver uncompressed.
    case yuyv

    public var planeCount: Int {
        switch self {
        case .i420: 3
        case .nv12: 2
        case .yuyv: 1
        }
    }

    /// Bytes of pixel data in one row of `plane` for a picture `width` pixels wide.
    public func rowBytes(plane: Int, width: Int) -> Int {
        switch (self, plane) {
        case (.i420, 0), (.nv12, 0): width
        case (.i420, _): (width + 1) / 2
        case (.nv12, _): (width + 1) / 2 * 2
        case (.yuyv, _): (width + 1) / 2 * 4
        }
    }

    /// Rows in `plane` for a picture `height` pixels tall.
    public func rows(plane: Int, height: Int) -> Int {
        switch (self, plane) {
        case (.i420, 0), (.nv12, 0), (.yuyv, _): height
        default: (height + 1) / 2
        }
    }

    /// Bytes of a tightly packed picture (no row padding), as Y4M and V4L2 lay it out.
    public func imageSize(width: Int, height: Int) -> Int {
        (0..<planeCount).reduce(0) { $0 + rowBytes(plane: $1, width: width) * rows(plane: $1, height: height) }
    }
}
