// A client of the relay made as practable's Go clients are (their reconws package): it POSTs to
// the access API's /session/{topic} with the token raw in Authorization, reads the relay URI from
// the JSON answer and dials it with gorilla/websocket. PractableClientIT builds it against
// Debian's gorilla/websocket and drives it line by line.
//
// Usage: practable-client <access URL> <topic>, the token in RELAY_CLIENT_TOKEN.
// Reads from stdin: "text <text>", "binary <hex>", "close". Writes to stdout: "connected",
// "text <text>", "binary <hex>" for each message received, then "closed <code>" when the relay
// closes the connection, or "error <what>".
package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

var out sync.Mutex

func say(format string, args ...interface{}) {
	out.Lock()
	defer out.Unlock()
	fmt.Printf(format+"\n", args...)
}

// relayURI asks the access API for a code, as practable's clients do.
func relayURI(access, topic, token string) (string, error) {
	request, err := http.NewRequest("POST", access+"/session/"+topic, nil)
	if err != nil {
		return "", err
	}
	request.Header.Add("Authorization", token)
	response, err := (&http.Client{Timeout: 10 * time.Second}).Do(request)
	if err != nil {
		return "", err
	}
	defer response.Body.Close()
	var answer struct {
		URI string `json:"uri"`
	}
	if response.StatusCode != http.StatusOK {
		return "", fmt.Errorf("the access API answered %d", response.StatusCode)
	}
	if err := json.NewDecoder(response.Body).Decode(&answer); err != nil {
		return "", err
	}
	return answer.URI, nil
}

func main() {
	uri, err := relayURI(os.Args[1], os.Args[2], os.Getenv("RELAY_CLIENT_TOKEN"))
	if err != nil {
		say("error %v", err)
		os.Exit(1)
	}
	conn, _, err := websocket.DefaultDialer.Dial(uri, nil)
	if err != nil {
		say("error %v", err)
		os.Exit(1)
	}
	say("connected")
	go func() {
		lines := bufio.NewScanner(os.Stdin)
		lines.Buffer(make([]byte, 64*1024), 16*1024*1024)
		for lines.Scan() {
			kind, arg, _ := strings.Cut(lines.Text(), " ")
			var err error
			conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
			switch kind {
			case "text":
				err = conn.WriteMessage(websocket.TextMessage, []byte(arg))
			case "binary":
				var payload []byte
				if payload, err = hex.DecodeString(arg); err == nil {
					err = conn.WriteMessage(websocket.BinaryMessage, payload)
				}
			case "close":
				err = conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
			default:
				err = fmt.Errorf("unknown command %q", kind)
			}
			if err != nil {
				say("error %v", err)
			}
		}
		if err := lines.Err(); err != nil {
			say("error reading commands: %v", err)
		}
	}()
	for {
		kind, payload, err := conn.ReadMessage()
		if err != nil {
			var closed *websocket.CloseError
			if errors.As(err, &closed) {
				say("closed %d", closed.Code)
			} else {
				say("error %v", err)
			}
			os.Exit(0)
		}
		if kind == websocket.TextMessage {
			say("text %s", payload)
		} else {
			say("binary %s", hex.EncodeToString(payload))
		}
	}
}
