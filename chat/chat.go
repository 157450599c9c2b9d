// Package chat defines the chat message, the unit of text exchanged between
// an agent, its environment and the language model.
package chat

// Roles used in messages.
const (
	System    = "system"
	User      = "user"
	Assistant = "assistant"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}
