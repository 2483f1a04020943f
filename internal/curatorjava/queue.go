package curatorjava

// pump forwards everything received on in to out, buffering without bound,
// so that senders on in never wait for the receiver of out. It closes out
// once in is closed and drained, or as soon as stop is closed.
func pump(in <-chan string, out chan<- string, stop <-chan struct{}) {
	defer close(out)
	var queue []string
	for in != nil || len(queue) > 0 {
		var send chan<- string
		var head string
		if len(queue) > 0 {
			send, head = out, queue[0]
		}
		select {
		case s, ok := <-in:
			if !ok {
				in = nil
				continue
			}
			queue = append(queue, s)
		case send <- head:
			queue[0] = ""
			queue = queue[1:]
		case <-stop:
			return
		}
	}
}
