package api

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// net/http answers some requests itself, on the connection, before any
// handler runs: one it cannot read (a header with a control character or
// a malformed line, a missing or repeated Host, two Content-Lengths: 400),
// headers over MaxHeaderBytes (431), a transfer coding it does not know
// (501), an unknown protocol version (505), all plain text; and an Expect
// other than 100-continue (417, no body). jsonErrorsConn turns each into
// the API's JSON error, so that every answer a client gets is JSON.

// netHTTPErrorHeaders follows the status line of every answer net/http
// writes itself to a request it could not read (net/http's server.go:
// "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n").
// Answers written through a ResponseWriter never have it: their headers
// are sorted and carry a Date.
const netHTTPErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// expectationFailed begins net/http's 417 to an Expect it does not know.
const expectationFailed = "HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\n"

// The codes of net/http's own refusals, as JSON.
const (
	CodeBadRequest             = "bad_request"                   // 400: net/http could not read the request
	CodeHeadersTooLarge        = "headers_too_large"             // 431: over ServeLimits.MaxHeaderBytes
	CodeTransferEncoding       = "unsupported_transfer_encoding" // 501
	CodeHTTPVersion            = "http_version_not_supported"    // 505
	CodeExpectationUnsupported = "expectation_failed"            // 417
)

// jsonErrorsListener wraps every connection it accepts in a jsonErrorsConn.
type jsonErrorsListener struct {
	net.Listener
	maxHeaderBytes int // for the 431's message; 0: net/http's default
}

func (l *jsonErrorsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &jsonErrorsConn{Conn: c, maxHeaderBytes: l.maxHeaderBytes}, nil
}

// jsonErrorsConn writes net/http's own refusals (see above) as the API's
// JSON errors, and everything else as it is.
type jsonErrorsConn struct {
	net.Conn
	maxHeaderBytes int
}

func (c *jsonErrorsConn) Write(p []byte) (int, error) {
	out, ok := jsonRefusal(p, c.maxHeaderBytes)
	if !ok {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite closes the sending side, as net/http does before it closes a
// connection whose request it did not read (headers over the limit), so
// that the client still reads the answer.
func (c *jsonErrorsConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// jsonRefusal returns the JSON answer for p when p is one of net/http's own
// refusals; ok is false for anything else.
func jsonRefusal(p []byte, maxHeaderBytes int) (out []byte, ok bool) {
	if !bytes.HasPrefix(p, []byte("HTTP/1.1 ")) || len(p) < len("HTTP/1.1 400") {
		return nil, false
	}
	status, err := strconv.Atoi(string(p[9:12]))
	if err != nil {
		return nil, false
	}
	var detail string
	switch {
	case bytes.HasPrefix(p, []byte(expectationFailed)):
	default:
		i := bytes.Index(p, []byte(netHTTPErrorHeaders))
		if i < 0 || bytes.IndexByte(p[:i], '\n') >= 0 {
			return nil, false // not right after the status line: a handler's answer
		}
		// "400 Bad Request: missing required Host header": the text after
		// the reason phrase, when net/http gives one.
		_, detail, _ = strings.Cut(string(p[9:i]), ": ")
	}
	e := &Error{Status: status}
	switch status {
	case http.StatusBadRequest:
		e.Code = CodeBadRequest
		if detail != "" {
			e.Message = fmt.Sprintf("The request could not be read: %s; send well-formed HTTP/1.1", cutForLog(detail))
		} else {
			e.Message = "The request could not be read: a header line is malformed (a control character, a name that is not a token, a line that is not Name: value) or a header that may come once came twice (Host, Content-Length); send well-formed HTTP/1.1 headers"
		}
	case http.StatusRequestHeaderFieldsTooLarge:
		e.Code = CodeHeadersTooLarge
		limit := "the most this server reads"
		if maxHeaderBytes > 0 {
			limit = fmt.Sprintf("%d KiB, the most this server reads", maxHeaderBytes>>10)
		}
		e.Message = "The request line and headers are over " + limit + "; send fewer or shorter headers"
	case http.StatusNotImplemented:
		e.Code = CodeTransferEncoding
		e.Message = "The request's Transfer-Encoding is not supported: send the body with Content-Length, or chunked"
	case http.StatusHTTPVersionNotSupported:
		e.Code = CodeHTTPVersion
		e.Message = "Only HTTP/1.0 and HTTP/1.1 are served here"
	case http.StatusExpectationFailed:
		e.Code = CodeExpectationUnsupported
		e.Message = "The only Expect this server takes is 100-continue: send the request without the other"
	default:
		e.Code = strings.ReplaceAll(strings.ToLower(http.StatusText(status)), " ", "_")
		e.Message = "The request could not be read"
		if detail != "" {
			e.Message += ": " + cutForLog(detail)
		}
	}
	return problemBytes(e), true
}
